/**
 * A complete local run in one process tree: a mock Kafka cluster, the simulated external system and
 * the service (as its own process, exactly as in production). Prints what to try; Ctrl-C stops all.
 */
import { spawn } from 'node:child_process';
import { startMockCluster } from '../tools/mock-cluster/mock-cluster.js';
import { createSimulator } from '../tools/simulator/simulator.js';

const port = process.env.PORT ?? '4000';
const resultsTopic = process.env.KAFKA_RESULTS_TOPIC ?? 'test-results';
const requestsTopic = process.env.KAFKA_REQUESTS_TOPIC ?? 'test-requests';

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
  env: { ...process.env, PORT: port, KAFKA_BROKERS: brokers.join(','), KAFKA_RESULTS_TOPIC: resultsTopic, KAFKA_REQUESTS_TOPIC: requestsTopic },
  stdio: ['ignore', 'inherit', 'inherit'],
});

const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 300; i++) {
  const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
  if (ok) break;
  await new Promise((r) => setTimeout(r, 200));
}

process.stderr.write(`
Result Collection Service is running.

  GraphQL (HTTP and WebSocket)  ${url}/graphql
  REST                          POST ${url}/tests, GET ${url}/tests/{id}
  Health / readiness            ${url}/healthz, ${url}/readyz
  Kafka (mock cluster)          ${brokers.join(',')}

Start a test:
  curl -s -X POST ${url}/tests -H 'content-type: application/json' -d '{"name":"demo","parameters":{"steps":5}}'

Read it (replace ID):
  curl -s ${url}/tests/ID
  curl -s ${url}/graphql -H 'content-type: application/json' \\
    -d '{"query":"{ test(correlationId: \\"ID\\") { status messageCount messages { nodes { sequence payload } } } }"}'

Follow it live (prints each message as it arrives, then exits when the test finishes):
  npx tsx scripts/follow.ts ${url} ID

Or all at once:
  npx tsx scripts/follow.ts ${url} --start

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
