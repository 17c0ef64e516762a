/**
 * A complete local run in one process tree: a mock Kafka cluster, the simulated external system and
 * the service (as its own process, exactly as in production). Prints what to try; Ctrl-C stops all.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hashPassword } from '../src/auth/credentials.js';
import { startMockCluster } from '../tools/mock-cluster/mock-cluster.js';
import { createSimulator } from '../tools/simulator/simulator.js';

const port = process.env.PORT ?? '4000';
const resultsTopic = process.env.KAFKA_RESULTS_TOPIC ?? 'test-results';
const requestsTopic = process.env.KAFKA_REQUESTS_TOPIC ?? 'test-requests';

// A demo client and user for the embedded issuer, created once and kept under .cache/dev/.
const devDir = new URL('../.cache/dev/', import.meta.url);
mkdirSync(devDir, { recursive: true });
const clientsFile = new URL('clients.json', devDir);
const usersFile = new URL('users.json', devDir);
if (!existsSync(clientsFile)) {
  const secret = randomBytes(24).toString('base64url');
  writeFileSync(
    clientsFile,
    JSON.stringify(
      [
        { client_id: 'demo', client_secret: secret, grant_types: ['client_credentials'], scope: 'tests:read tests:write' },
        { client_id: 'demo-web', grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['http://localhost:5173/callback'], token_endpoint_auth_method: 'none' },
      ],
      null,
      2,
    ),
  );
  writeFileSync(usersFile, JSON.stringify([{ username: 'demo', password_hash: await hashPassword('demo-password'), sub: 'user-demo', name: 'Demo User', email: 'demo@example.com' }], null, 2));
}
const demoSecret = (JSON.parse(readFileSync(clientsFile, 'utf8')) as Array<{ client_id: string; client_secret?: string }>).find((c) => c.client_id === 'demo')?.client_secret ?? '';

const cluster = await startMockCluster({
  brokers: 3,
  topics: [
    { name: resultsTopic, partitions: 6 },
    { name: requestsTopic, partitions: 3 },
  ],
});
const brokers = cluster.bootstrapServers;
const simulator = createSimulator({ brokers, requestsTopic, resultsTopic, steps: 5, intervalMs: 500 });
await simulator.start();

const service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  env: {
    ...process.env,
    PORT: port,
    KAFKA_BROKERS: brokers.join(','),
    KAFKA_RESULTS_TOPIC: resultsTopic,
    KAFKA_REQUESTS_TOPIC: requestsTopic,
    OIDC_CLIENTS_FILE: process.env.OIDC_CLIENTS_FILE ?? new URL(clientsFile).pathname,
    OIDC_USERS_FILE: process.env.OIDC_USERS_FILE ?? new URL(usersFile).pathname,
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});

const url = `http://localhost:${port}`;
for (let i = 0; i < 300; i++) {
  const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
  if (ok) break;
  await new Promise((r) => setTimeout(r, 200));
}

process.stderr.write(`
Result Collection Service is running.

  GraphQL (HTTP and WebSocket)  ${url}/graphql
  REST                          POST ${url}/tests, GET ${url}/tests/{id}
  OAuth 2.0 / OIDC issuer       ${url}/.well-known/openid-configuration
  Health / readiness            ${url}/healthz, ${url}/readyz
  Kafka (mock cluster)          ${brokers.join(',')}

Get an access token (client "demo", client credentials; the secret is in .cache/dev/clients.json):
  export TOKEN=$(curl -s -u demo:${demoSecret} -d grant_type=client_credentials -d 'scope=tests:read tests:write' ${url}/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')

Start a test:
  curl -s -X POST ${url}/tests -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"demo","parameters":{"steps":5}}'

Read it (replace ID):
  curl -s ${url}/tests/ID -H "authorization: Bearer $TOKEN"
  curl -s ${url}/graphql -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
    -d '{"query":"{ test(correlationId: \\"ID\\") { status messageCount messages { nodes { sequence payload } } } }"}'

Follow it live over the WebSocket subscription (prints each message, exits when the test finishes):
  npx tsx scripts/follow.ts ${url} ID          # uses $TOKEN
  npx tsx scripts/follow.ts ${url} --start     # starts a test first

Browser sign-in (authorization code + PKCE): client "demo-web", user "demo" / "demo-password".

Ctrl-C stops everything.
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  await simulator.dispose();
  await cluster.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
service.on('exit', (code) => {
  if (!stopping) {
    process.stderr.write(`service exited with code ${code}\n`);
    void simulator.dispose().then(() => cluster.stop()).then(() => process.exit(code ?? 1));
  }
});
