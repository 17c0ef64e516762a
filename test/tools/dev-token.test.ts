/**
 * Tokens on the local stack, as its printed commands get them: the stack's issuer files are mended
 * on every start (a demo client that was removed or lost its secret comes back, other clients stay),
 * and the commands it prints (`npm run token`, and curl by hand) print a token the service accepts,
 * from whichever clients file the service reads (`OIDC_CLIENTS_FILE`). The service is the
 * pipeline's harness with the embedded issuer; the files live in a temporary folder.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSecret, ensureDevIssuerFiles, tokenCommands } from '../../scripts/dev-issuer-files.js';
import { startPipelineService, type TestService } from '../support/service.js';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
let dir: string;
let svc: TestService;
let files: { clientsFile: string; usersFile: string };

type Client = { client_id: string; client_secret?: string };
const clientsIn = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Client[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-token-'));
  files = { clientsFile: join(dir, 'clients.json'), usersFile: join(dir, 'users.json') };
  // A clients file kept from an earlier run that lost the demo client, with a client of the developer's own.
  writeFileSync(files.clientsFile, JSON.stringify([{ client_id: 'own', client_secret: 'own-secret-of-enough-length', grant_types: ['client_credentials'] }]));
  await ensureDevIssuerFiles(files, '4000');
  svc = await startPipelineService({ embeddedIssuer: true, env: { OIDC_CLIENTS_FILE: files.clientsFile, OIDC_USERS_FILE: files.usersFile } });
});

afterAll(async () => {
  await svc?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs one printed command line in bash from the repo's root, then prints $TOKEN. */
async function tokenFrom(command: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', `set -e; ${command}; printf %s "$TOKEN"`], { cwd: root });
  return stdout;
}

/** Whether the service accepts `token` for an operation. */
async function accepted(token: string): Promise<number> {
  const response = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  return response.status;
}

describe("the local stack's issuer files", () => {
  it('get the demo client back, with a secret, and keep the other clients and the secret on the next start', async () => {
    const restored = clientsIn(files.clientsFile);
    expect(restored.map((c) => c.client_id).sort()).toEqual(['demo', 'demo-web', 'own']);
    const secret = clientSecret(files.clientsFile);
    expect(secret).toMatch(/^[\w-]{32}$/);
    await ensureDevIssuerFiles(files, '4000');
    expect(clientSecret(files.clientsFile)).toBe(secret);
    expect((JSON.parse(readFileSync(files.usersFile, 'utf8')) as Array<{ username: string }>).map((u) => u.username)).toEqual(['demo']);
  });
});

describe('the printed token commands', () => {
  it('print a token the service accepts, from the clients file named by OIDC_CLIENTS_FILE', { timeout: 60_000 }, async () => {
    const secret = clientSecret(files.clientsFile) as string;
    const commands = tokenCommands(svc.url, files.clientsFile, secret, join(root, '.cache/dev/clients.json'));
    expect(commands.npm).toContain(`OIDC_CLIENTS_FILE=${files.clientsFile} npm run --silent token -- ${svc.url}`);
    for (const command of [commands.npm, commands.curl]) {
      const token = await tokenFrom(command);
      expect(token.split('.')).toHaveLength(3);
      expect(await accepted(token)).toBe(200);
    }
  });
});
