/**
 * Credentials of the embedded issuer: user passwords hashed with scrypt (slow on purpose), client
 * secrets optionally stored as SHA-256 (they are long random strings, so a fast hash suffices), and
 * the JSON files operators list users and clients in.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../base/errors.js';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCallback(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))));

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string, cost = { N: 16384, r: 8, p: 1 }): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...cost, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Checks a password against a hash from {@link hashPassword}, in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return timingSafeEqual(actual, expected);
}

/** A client secret stored as `sha256:<hex>` instead of in plain text. */
export const HASHED_SECRET_PREFIX = 'sha256:';

/** Compares a presented client secret with the stored one (plain or `sha256:` hashed), in constant time. */
export function clientSecretMatches(stored: string, presented: string): boolean {
  const expected = stored.startsWith(HASHED_SECRET_PREFIX)
    ? Buffer.from(stored.slice(HASHED_SECRET_PREFIX.length), 'hex')
    : createHash('sha256').update(stored).digest();
  const actual = createHash('sha256').update(presented).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A user who may sign in at the login page. */
export interface UserEntry {
  readonly username: string;
  readonly passwordHash: string;
  readonly sub: string;
  readonly name?: string;
  readonly email?: string;
  /**
   * Whether the user may be granted the admin scope (`AUTH_ADMIN_SCOPE`), through a client that
   * allows it. A client's scopes say what it may ask for, not who may have it.
   */
  readonly admin: boolean;
}

/** An OAuth client. */
export interface ClientEntry {
  readonly client_id: string;
  /** Plain, or `sha256:<hex>`; absent for public clients. */
  readonly client_secret?: string;
  readonly grant_types: readonly string[];
  readonly redirect_uris: readonly string[];
  /** API scopes the client may be granted (space-separated); defaults to read and write. */
  readonly scope?: string;
  readonly token_endpoint_auth_method?: string;
}

/** Reads the users file (`OIDC_USERS_FILE`): `[{ username, password_hash, sub, name?, email?, admin? }]`. */
export function loadUsers(path: string | null): UserEntry[] {
  if (path === null) return [];
  const entries = readJsonArray('OIDC_USERS_FILE', path);
  const users = entries.map((raw, i) => {
    const e = raw as Record<string, unknown>;
    for (const field of ['username', 'password_hash', 'sub']) {
      if (typeof e[field] !== 'string' || e[field] === '') throw new ConfigError('OIDC_USERS_FILE', `entry ${i}: "${field}" must be a non-empty string`);
    }
    const [scheme, n, r, p, salt, hash] = (e.password_hash as string).split('$');
    const wellFormed =
      scheme === 'scrypt' && [n, r, p].every((x) => /^\d+$/.test(x ?? '')) && (salt ?? '').length >= 16 && Buffer.from(hash ?? '', 'base64url').length === 32;
    if (!wellFormed) throw new ConfigError('OIDC_USERS_FILE', `entry ${i}: password_hash must come from scripts/hash-password.ts`);
    // Only a JSON boolean: "admin": "false" (a string) must not read as an admin.
    if (e.admin !== undefined && typeof e.admin !== 'boolean') throw new ConfigError('OIDC_USERS_FILE', `entry ${i}: "admin" must be true or false`);
    return {
      username: e.username as string,
      passwordHash: e.password_hash as string,
      sub: e.sub as string,
      ...(typeof e.name === 'string' ? { name: e.name } : {}),
      ...(typeof e.email === 'string' ? { email: e.email } : {}),
      admin: e.admin === true,
    };
  });
  // Two entries for one name or subject would leave which password or admin flag holds to chance.
  for (const field of ['username', 'sub'] as const) {
    const seen = new Set<string>();
    for (const [i, user] of users.entries()) {
      if (seen.has(user[field])) throw new ConfigError('OIDC_USERS_FILE', `entry ${i}: another entry has the ${field} "${user[field]}"`);
      seen.add(user[field]);
    }
  }
  return users;
}

/** Reads the clients file (`OIDC_CLIENTS_FILE`). */
export function loadClients(path: string | null): ClientEntry[] {
  if (path === null) return [];
  const entries = readJsonArray('OIDC_CLIENTS_FILE', path);
  return entries.map((raw, i) => {
    const e = raw as Record<string, unknown>;
    if (typeof e.client_id !== 'string' || e.client_id === '') throw new ConfigError('OIDC_CLIENTS_FILE', `entry ${i}: "client_id" must be a non-empty string`);
    if (e.client_secret !== undefined && (typeof e.client_secret !== 'string' || e.client_secret.length < 16)) {
      throw new ConfigError('OIDC_CLIENTS_FILE', `entry ${i}: "client_secret" must be a string of at least 16 characters`);
    }
    const strings = (v: unknown, field: string) => {
      if (v === undefined) return [];
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
        throw new ConfigError('OIDC_CLIENTS_FILE', `entry ${i}: "${field}" must be an array of strings`);
      return v as string[];
    };
    const grants = strings(e.grant_types, 'grant_types');
    const refused = grants.filter((g) => !['client_credentials', 'authorization_code', 'refresh_token'].includes(g));
    if (refused.length > 0) throw new ConfigError('OIDC_CLIENTS_FILE', `entry ${i}: grant types ${refused.join(', ')} are not supported`);
    // Client credentials without a secret would let anyone who knows the id mint tokens.
    if (grants.includes('client_credentials') && (typeof e.client_secret !== 'string' || e.token_endpoint_auth_method === 'none')) {
      throw new ConfigError('OIDC_CLIENTS_FILE', `entry ${i}: a client_credentials client needs a client_secret and a secret-based token_endpoint_auth_method`);
    }
    return {
      client_id: e.client_id,
      ...(typeof e.client_secret === 'string' ? { client_secret: e.client_secret } : {}),
      grant_types: grants,
      redirect_uris: strings(e.redirect_uris, 'redirect_uris'),
      ...(typeof e.scope === 'string' ? { scope: e.scope } : {}),
      ...(typeof e.token_endpoint_auth_method === 'string' ? { token_endpoint_auth_method: e.token_endpoint_auth_method } : {}),
    };
  });
}

function readJsonArray(variable: string, path: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(variable, `cannot read ${path}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(variable, `${path} must hold a JSON array`);
  return parsed;
}
