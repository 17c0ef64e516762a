/**
 * The embedded issuer's files of the local stack (scripts/local-stack.ts): the clients file with the
 * demo client (client credentials, read and write scopes, a secret) and the browser client, and the
 * users file with the demo user. Each is made whole on every start, not only on the first: a demo
 * client that was removed, or lost its secret, is added back (a secret it has is kept), so the
 * token command the stack prints always works; other clients and users are left as they are.
 * Also the token commands the stack prints, for whichever clients file the service reads.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hashPassword } from '../src/auth/credentials.js';

/** The demo client's id: client credentials, for `npm run token`. */
export const DEMO_CLIENT_ID = 'demo';

/** One entry of a clients file, as far as these tools read it. */
interface ClientEntry {
  readonly client_id: string;
  readonly client_secret?: string;
}

/** The browser client, which signs in from GraphiQL and the dashboard on this run's port (under both local names). */
function demoWebClient(port: string): object {
  return {
    client_id: 'demo-web',
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: ['localhost', '127.0.0.1'].flatMap((host) => [`http://${host}:${port}/graphql`, `http://${host}:${port}/dashboard/`]),
    token_endpoint_auth_method: 'none',
  };
}

/** Reads a JSON array file, or none when it is absent or not an array. */
function readEntries<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  return Array.isArray(parsed) ? (parsed as T[]) : [];
}

/** Writes or mends the stack's clients and users files (see the file header). */
export async function ensureDevIssuerFiles(files: { readonly clientsFile: string; readonly usersFile: string }, port: string): Promise<void> {
  const clients = readEntries<ClientEntry>(files.clientsFile);
  const demoSecret = clients.find((c) => c.client_id === DEMO_CLIENT_ID)?.client_secret;
  const demo = {
    client_id: DEMO_CLIENT_ID,
    client_secret: typeof demoSecret === 'string' && demoSecret !== '' ? demoSecret : randomBytes(24).toString('base64url'),
    grant_types: ['client_credentials'],
    scope: 'tests:read tests:write',
  };
  const others = clients.filter((c) => c.client_id !== DEMO_CLIENT_ID && c.client_id !== 'demo-web');
  writeFileSync(files.clientsFile, JSON.stringify([demo, demoWebClient(port), ...others], null, 2));
  const users = readEntries<{ username: string }>(files.usersFile);
  if (!users.some((u) => u.username === 'demo')) {
    const demoUser = { username: 'demo', password_hash: await hashPassword('demo-password'), sub: 'user-demo', name: 'Demo User', email: 'demo@example.com' };
    writeFileSync(files.usersFile, JSON.stringify([demoUser, ...users], null, 2));
  }
}

/** The secret of `clientId` in a clients file; undefined when the file, the client or its secret is missing. */
export function clientSecret(clientsFile: string, clientId = DEMO_CLIENT_ID): string | undefined {
  const secret = readEntries<ClientEntry>(clientsFile).find((c) => c.client_id === clientId)?.client_secret;
  return typeof secret === 'string' && secret !== '' ? secret : undefined;
}

/**
 * The commands that print an access token of the demo client from the service at `url`: `npm run
 * token` (naming the clients file when it is not the stack's own, as OIDC_CLIENTS_FILE) and the same
 * with curl. Both run from the repo's root.
 */
export function tokenCommands(url: string, clientsFile: string, secret: string, ownClientsFile: string): { readonly npm: string; readonly curl: string } {
  const file = clientsFile === ownClientsFile ? '' : `OIDC_CLIENTS_FILE=${shellQuote(clientsFile)} `;
  return {
    npm: `export TOKEN=$(${file}npm run --silent token -- ${url})`,
    curl: `export TOKEN=$(curl -s -u ${DEMO_CLIENT_ID}:${secret} -d grant_type=client_credentials -d 'scope=tests:read tests:write' ${url}/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
  };
}

function shellQuote(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
