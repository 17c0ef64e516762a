/**
 * Prints an access token for the local stack's demo client (client credentials, read and write
 * scopes), so `export TOKEN=$(npm run --silent token)` works as written. The client's secret comes
 * from .cache/dev/clients.json, which scripts/dev.sh creates on its first run.
 *
 *   npm run --silent token [-- URL]     URL defaults to http://localhost:$PORT (PORT defaults to 4000)
 */
import { existsSync, readFileSync } from 'node:fs';

const url = (process.argv[2] ?? `http://localhost:${process.env.PORT ?? '4000'}`).replace(/\/$/, '');
const clientsFile = new URL('../.cache/dev/clients.json', import.meta.url);

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n`);
  process.exit(1);
}

if (!existsSync(clientsFile)) fail('no demo client yet: start the local stack first (./scripts/dev.sh), which creates .cache/dev/clients.json');
const clients = JSON.parse(readFileSync(clientsFile, 'utf8')) as Array<{ client_id: string; client_secret?: string }>;
const secret = clients.find((c) => c.client_id === 'demo')?.client_secret;
if (secret === undefined) fail('.cache/dev/clients.json has no "demo" client with a secret; delete the file and restart ./scripts/dev.sh');

const response = await fetch(`${url}/oauth/token`, {
  method: 'POST',
  headers: { authorization: `Basic ${Buffer.from(`demo:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'tests:read tests:write' }),
}).catch((error: unknown) => fail(`${url} does not answer (${error instanceof Error ? error.message : String(error)}): is ./scripts/dev.sh running?`));
const body = (await response.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
if (!response.ok || body.access_token === undefined)
  fail(`${url}/oauth/token answered ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
process.stdout.write(`${body.access_token}\n`);
