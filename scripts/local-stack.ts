/**
 * A complete local run in one process tree: a Kafka broker, the simulated external system and the
 * service (as its own process, exactly as in production). Prints what to try; Ctrl-C stops the
 * service first, then the simulator, then the broker.
 *
 *   scripts/dev.sh            librdkafka's mock cluster (light, starts at once)
 *   scripts/dev.sh --kafka    a real Apache Kafka node (KRaft), started here and stopped at the end
 *   scripts/dev.sh --redis-cluster    the state in a local Redis Cluster (3 primaries, 3 replicas)
 *   scripts/dev.sh --redis-sentinel   the state in a local Sentinel-managed Redis (1 primary, 1 replica, 3 sentinels)
 *   KAFKA_BROKERS=host:9092 scripts/dev.sh   that cluster; no broker is started, missing topics are created
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { loadConfig, type Config } from '../src/config/config.js';
import { createLogger } from '../src/base/logger.js';
import { clusterEnv, sentinelEnv, startRedisCluster, startRedisSentinel } from '../tools/redis/redis-cluster.js';
import { createSimulator, type Simulator } from '../tools/simulator/simulator.js';
import { clientSecret, DEMO_CLIENT_ID, ensureDevIssuerFiles, tokenCommands } from './dev-issuer-files.js';
import { startLocalBroker, type LocalBroker, type LocalBrokerKind } from './local-broker.js';

const USAGE = 'usage: scripts/dev.sh [--kafka] [--redis-cluster | --redis-sentinel]   (with KAFKA_BROKERS set, that cluster is used and no broker is started)';
const OPTIONS = ['--kafka', '--redis-cluster', '--redis-sentinel'];
const unknown = process.argv.slice(2).filter((a) => !OPTIONS.includes(a));
if (unknown.length > 0 || (process.argv.includes('--redis-cluster') && process.argv.includes('--redis-sentinel'))) {
  const message = unknown.length > 0 ? `unknown option ${unknown.join(' ')}\n` : '--redis-cluster and --redis-sentinel exclude each other\n';
  process.stderr.write(`${unknown.includes('--help') || unknown.includes('-h') ? '' : message}${USAGE}\n`);
  process.exit(unknown.includes('--help') || unknown.includes('-h') ? 0 : 2);
}
// The shared state in a Redis topology started here (STATE_STORE=redis), or as configured.
const redisKind = process.argv.includes('--redis-cluster') ? 'cluster' : process.argv.includes('--redis-sentinel') ? 'sentinel' : undefined;
const external = (process.env.KAFKA_BROKERS ?? '').trim() !== '';
const kind: LocalBrokerKind = external ? 'external' : process.argv.includes('--kafka') ? 'kafka' : 'mock';
const port = process.env.PORT ?? '4000';

// The demo clients and user for the embedded issuer, kept under .cache/dev/ and mended on every
// start (dev-issuer-files.ts); the service reads OIDC_CLIENTS_FILE instead when it is set.
const devDir = new URL('../.cache/dev/', import.meta.url);
mkdirSync(devDir, { recursive: true });
const ownClientsFile = new URL('clients.json', devDir).pathname;
const usersFile = new URL('users.json', devDir).pathname;
await ensureDevIssuerFiles({ clientsFile: ownClientsFile, usersFile }, port);
const clientsFile = process.env.OIDC_CLIENTS_FILE ?? ownClientsFile;
const demoSecret = clientSecret(clientsFile);

// The service's own configuration decides the topics (and validates what the environment says).
const baseEnv: Record<string, string | undefined> = {
  ...process.env,
  PORT: port,
  OIDC_CLIENTS_FILE: clientsFile,
  OIDC_USERS_FILE: process.env.OIDC_USERS_FILE ?? usersFile,
  // GraphiQL and the dashboard with their sign-in, and CORS for the stack's own pages under both local names.
  GRAPHQL_IDE: process.env.GRAPHQL_IDE ?? 'true',
  GRAPHQL_IDE_CLIENT_ID: process.env.GRAPHQL_IDE_CLIENT_ID ?? 'demo-web',
  DASHBOARD: process.env.DASHBOARD ?? 'true',
  DASHBOARD_CLIENT_ID: process.env.DASHBOARD_CLIENT_ID ?? 'demo-web',
  CORS_ALLOWED_ORIGINS: process.env.CORS_ALLOWED_ORIGINS ?? `http://localhost:${port},http://127.0.0.1:${port}`,
};
let config: Config;
try {
  config = loadConfig(external ? baseEnv : { ...baseEnv, KAFKA_BROKERS: '127.0.0.1:9092' });
} catch (error) {
  process.stderr.write(`invalid configuration: ${(error as Error).message}\n`);
  process.exit(78);
}
const { resultsTopic, requestsTopic } = config.kafka;

// Stopped in this order on Ctrl-C, SIGTERM, a failed start or the service's end: the service (it
// commits its offsets on the way out), the simulator, the Redis topology, then the broker.
let broker: LocalBroker | undefined;
let redis: { env: Record<string, string>; description: string; stop(): Promise<void> } | undefined;
let simulator: Simulator | undefined;
let service: ChildProcess | undefined;
let stopping: Promise<void> | undefined;
const stop = (code: number) =>
  (stopping ??= (async () => {
    if (service !== undefined && service.exitCode === null && service.signalCode === null) {
      const exited = once(service, 'exit');
      service.kill('SIGTERM');
      await exited;
    }
    await simulator?.dispose().catch(() => undefined);
    await redis?.stop().catch(() => undefined);
    await broker?.stop();
    process.exit(code);
  })());
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

if (kind === 'external') process.stderr.write(`Using the Kafka cluster of KAFKA_BROKERS (${config.kafka.brokers.join(',')}); no broker is started.\n`);
if (kind === 'kafka') process.stderr.write('Starting Apache Kafka (one KRaft node)...\n');
let brokers: string[];
try {
  broker = await startLocalBroker(kind, config.kafka, createLogger({ level: 'warn' }));
  brokers = broker.bootstrapServers;
  simulator = createSimulator({ brokers, requestsTopic, resultsTopic, steps: 5, intervalMs: 500 });
  await simulator.start();
  if (redisKind !== undefined) {
    process.stderr.write(
      `Starting a local Redis ${redisKind === 'cluster' ? 'Cluster (3 primaries, 3 replicas)' : 'Sentinel set (1 primary, 1 replica, 3 sentinels)'}...\n`,
    );
    redis = await startRedis(redisKind);
  }
} catch (error) {
  process.stderr.write(`the local stack did not start: ${(error as Error).message}\n`);
  await stop(1);
  throw error;
}

// Its own process group: a Ctrl-C at the terminal reaches only this process, which stops the
// service before the broker.
service = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
  env: { ...baseEnv, KAFKA_BROKERS: brokers.join(','), KAFKA_RESULTS_TOPIC: resultsTopic, KAFKA_REQUESTS_TOPIC: requestsTopic, ...redis?.env },
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});
const child = service;
process.once('exit', () => child.kill('SIGKILL'));
child.once('exit', (code) => {
  if (stopping === undefined) process.stderr.write(`service exited with code ${code}\n`);
  void stop(code ?? 1);
});

const url = `http://localhost:${port}`;
for (let i = 0; i < 300; i++) {
  const ok = await fetch(`${url}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (ok) break;
  await new Promise((r) => setTimeout(r, 200));
}

process.stderr.write(`
Result Collection Service is running.

  Dashboard (open in a browser) ${url}/dashboard/
  Sign in to the dashboard      ${url}/dashboard/?sign-in   user "demo", password "demo-password"
  GraphiQL (open in a browser)  ${url}/graphql
  Sign in from GraphiQL         ${url}/graphql?sign-in      user "demo", password "demo-password"
  GraphQL (HTTP and WebSocket)  ${url}/graphql
  REST                          POST ${url}/tests, GET ${url}/tests/{id}
  OAuth 2.0 / OIDC issuer       ${url}/.well-known/openid-configuration
  Health / readiness            ${url}/healthz, ${url}/readyz
  Kafka                         ${brokers.join(',')}
                                ${broker?.description ?? ''}
                                topics: results ${resultsTopic}, requests ${requestsTopic}${config.kafka.deadLetterTopic === null ? '' : `, dead letters ${config.kafka.deadLetterTopic}`}
${
  redis === undefined
    ? ''
    : `  Redis                         ${redis.description}\n                                ${Object.entries(redis.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}\n`
}
${tokenHelp(url)}

Start a test:
  curl -s -X POST ${url}/tests -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"demo","parameters":{"steps":5}}'

Read it (replace ID):
  curl -s ${url}/tests/ID -H "authorization: Bearer $TOKEN"
  curl -s ${url}/graphql -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
    -d '{"query":"{ test(correlationId: \\"ID\\") { status messageCount messages { nodes { sequence payload } } } }"}'

Follow it live over the WebSocket subscription (prints each message, exits when the test finishes):
  npx tsx scripts/follow.ts ${url} ID          # uses $TOKEN
  npx tsx scripts/follow.ts ${url} --start     # starts a test first

Browser sign-in (authorization code + PKCE, client "demo-web"): open ${url}/dashboard/?sign-in or
${url}/graphql?sign-in and sign in as "demo" / "demo-password". The dashboard starts tests and shows
them live; GraphiQL sends the token with every operation.

Ctrl-C stops everything.
`);

/** How to get an access token: the demo client's commands, or why the clients file in use has none. */
function tokenHelp(base: string): string {
  if (demoSecret === undefined) {
    return `No token command: the clients file in use (OIDC_CLIENTS_FILE=${clientsFile}) has no "${DEMO_CLIENT_ID}" client with a secret.
  Add one with grant_types ["client_credentials"] and scope "tests:read tests:write", or unset OIDC_CLIENTS_FILE.`;
  }
  const commands = tokenCommands(base, clientsFile, demoSecret, ownClientsFile);
  return `Get an access token (client "${DEMO_CLIENT_ID}", client credentials; the secret is in ${clientsFile === ownClientsFile ? '.cache/dev/clients.json' : clientsFile}):
  ${commands.npm}
  # the same by hand:
  ${commands.curl}`;
}

/**
 * Starts the Redis topology the state lives in, in process groups of its own (a Ctrl-C reaches
 * only the stack, which stops the service before it), with the settings the service reads.
 */
async function startRedis(kind: 'cluster' | 'sentinel') {
  if (kind === 'cluster') {
    const cluster = await startRedisCluster({ detached: true });
    return {
      env: clusterEnv(cluster),
      description: `Redis Cluster, ${cluster.nodes.length} nodes, started here (logs under ${cluster.dir})`,
      stop: cluster.stop,
    };
  }
  const set = await startRedisSentinel({ detached: true });
  return { env: sentinelEnv(set), description: `Redis Sentinel set "${set.masterName}", started here (logs under ${set.dir})`, stop: set.stop };
}
