/**
 * Prints an access token for the local stack's demo client (client credentials, read and write
 * scopes), so `export TOKEN=$(npm run --silent token)` works as written. The client's secret comes
 * from the clients file the service reads: OIDC_CLIENTS_FILE when it is set, else
 * .cache/dev/clients.json, which scripts/dev.sh writes (and mends) on every start.
 *
 *   npm run --silent token [-- URL]     URL defaults to http://localhost:$PORT (PORT defaults to 4000)
 */
import { existsSync } from 'node:fs';
import { clientSecret, DEMO_CLIENT_ID } from './dev-issuer-files.js';

const url = (process.argv[2] ?? `http://localhost:${process.env.PORT ?? '4000'}`).replace(/\/$/, '');
const clientsFile = process.env.OIDC_CLIENTS_FILE ?? new URL('../.cache/dev/clients.json', import.meta.url).pathname;

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n`);
  process.exit(1);
}

if (!existsSync(clientsFile)) fail(`no clients file at ${clientsFile}: start the local stack first (./scripts/dev.sh), which writes .cache/dev/clients.json`);
const secret = clientSecret(clientsFile);
if (secret === undefined) fail(`${clientsFile} has no "${DEMO_CLIENT_ID}" client with a secret; restart ./scripts/dev.sh, which adds it to its own file`);

const response = await fetch(`${url}/oauth/token`, {
  method: 'POST',
  headers: { authorization: `Basic ${Buffer.from(`${DEMO_CLIENT_ID}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'tests:read tests:write' }),
}).catch((error: unknown) => fail(`${url} does not answer (${error instanceof Error ? error.message : String(error)}): is ./scripts/dev.sh running?`));
const body = (await response.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
if (!response.ok || body.access_token === undefined)
  fail(`${url}/oauth/token answered ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
process.stdout.write(`${body.access_token}\n`);
