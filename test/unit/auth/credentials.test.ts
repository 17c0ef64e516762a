import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientSecretMatches, hashPassword, loadClients, loadUsers, verifyPassword } from '../../../src/auth/credentials.js';

const file = (content: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'rcs-cred-')), 'f.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
};

describe('credentials', () => {
  it('hashes and verifies passwords', async () => {
    const hash = await hashPassword('right horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('right horse battery', hash)).toBe(true);
    expect(await verifyPassword('wrong', hash)).toBe(false);
  });

  it('compares plain and sha256-hashed client secrets', () => {
    expect(clientSecretMatches('plain-secret-0123456789', 'plain-secret-0123456789')).toBe(true);
    expect(clientSecretMatches('plain-secret-0123456789', 'other')).toBe(false);
    const hashed = 'sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8'; // "password"
    expect(clientSecretMatches(hashed, 'password')).toBe(true);
    expect(clientSecretMatches(hashed, hashed)).toBe(false);
  });

  it('refuses a user whose password hash is malformed (an empty hash would accept anything)', () => {
    expect(() => loadUsers(file([{ username: 'a', sub: 'u-a', password_hash: 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$' }]))).toThrow(
      /^OIDC_USERS_FILE: entry 0: password_hash/,
    );
    expect(() => loadUsers(file([{ username: 'a', sub: 'u-a', password_hash: 'plaintext' }]))).toThrow(/^OIDC_USERS_FILE/);
  });

  it("reads a user's admin flag (absent: not an admin; only a JSON boolean) and refuses two entries for one user", async () => {
    const password_hash = await hashPassword('x', { N: 1024, r: 8, p: 1 });
    const [plain, admin] = loadUsers(
      file([
        { username: 'a', sub: 'u-a', password_hash },
        { username: 'b', sub: 'u-b', password_hash, admin: true },
      ]),
    );
    expect([plain?.admin, admin?.admin]).toEqual([false, true]);
    expect(() => loadUsers(file([{ username: 'a', sub: 'u-a', password_hash, admin: 'false' }]))).toThrow(
      /^OIDC_USERS_FILE: entry 0: "admin" must be true or false/,
    );
    // One subject twice, admin in one entry only: refused rather than decided by order.
    expect(() =>
      loadUsers(
        file([
          { username: 'a', sub: 'u-a', password_hash },
          { username: 'b', sub: 'u-a', password_hash, admin: true },
        ]),
      ),
    ).toThrow(/^OIDC_USERS_FILE: entry 1: another entry has the sub "u-a"/);
    expect(() =>
      loadUsers(
        file([
          { username: 'a', sub: 'u-a', password_hash },
          { username: 'a', sub: 'u-b', password_hash },
        ]),
      ),
    ).toThrow(/^OIDC_USERS_FILE: entry 1: another entry has the username "a"/);
  });

  it('refuses a client_credentials client without a secret', () => {
    expect(() => loadClients(file([{ client_id: 'worker', grant_types: ['client_credentials'] }]))).toThrow(/needs a client_secret/);
    expect(() =>
      loadClients(
        file([{ client_id: 'worker', client_secret: 'long-enough-secret-123', token_endpoint_auth_method: 'none', grant_types: ['client_credentials'] }]),
      ),
    ).toThrow(/needs a client_secret/);
    expect(() => loadClients(file([{ client_id: 'x', grant_types: ['password'] }]))).toThrow(/not supported/);
    expect(loadClients(file([{ client_id: 'spa', grant_types: ['authorization_code'], redirect_uris: ['https://a.example/cb'] }]))).toHaveLength(1);
  });
});
