/**
 * The common-stack peer (`bench/peers/common-stack/`) as the benchmarks run it, the counterpart of
 * `service.ts`: on a free port, seeded with `--tests N --messages M` (the same tests, ids and
 * messages as the service's seed), with `/metrics` serving the process's CPU time in the line the
 * service's `/metrics` has, so the harness reads both alike. Prints `{ url, ids }` once listening,
 * runs until SIGTERM. Settings from the environment: the service's `KAFKA_*` names it shares,
 * `PEER_VARIANT` (memory | redis), `REDIS_URL`, `PEER_REDIS_PREFIX`, `PEER_CONSUME=false` (an API-only
 * replica), and `PEER_CRASH_AFTER_STORED`
 * (the correctness scenarios: the process kills itself right after storing and publishing that
 * many records, inside the handler, so before kafkajs commits their offsets).
 */
import { startPeer } from '../peers/common-stack/server.js';
import type { PeerStore } from '../peers/common-stack/store.js';
import { seedIds } from '../lib/seed.js';
import { BENCH_AUTH_ENV } from '../lib/token.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const env = process.env;
const crashAfter = Number(env.PEER_CRASH_AFTER_STORED ?? 0);
let stored = 0;
let duplicates = 0;

const peer = await startPeer({
  brokers: (env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  resultsTopic: env.KAFKA_RESULTS_TOPIC ?? 'test-results',
  requestsTopic: env.KAFKA_REQUESTS_TOPIC ?? 'test-requests',
  groupId: env.KAFKA_GROUP_ID ?? `peer-${process.pid}`,
  variant: env.PEER_VARIANT === 'redis' ? 'redis' : 'memory',
  redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  redisPrefix: env.PEER_REDIS_PREFIX ?? `peer-${process.pid}`,
  auth: { issuer: BENCH_AUTH_ENV.AUTH_ISSUER, audience: BENCH_AUTH_ENV.AUTH_AUDIENCE, hs256Secret: BENCH_AUTH_ENV.AUTH_HS256_SECRET },
  ...(env.KAFKA_FETCH_MAX_WAIT_MS === undefined ? {} : { fetchMaxWaitMs: Number(env.KAFKA_FETCH_MAX_WAIT_MS) }),
  ...(env.KAFKA_SESSION_TIMEOUT_MS === undefined ? {} : { sessionTimeoutMs: Number(env.KAFKA_SESSION_TIMEOUT_MS) }),
  fromBeginning: true,
  consume: env.PEER_CONSUME !== 'false',
  onRecord: (isNew) => {
    if (isNew) stored += 1;
    else duplicates += 1;
    if (crashAfter > 0 && stored >= crashAfter) process.kill(process.pid, 'SIGKILL');
  },
});
peer.app.get('/metrics', (_req, res) => {
  const { user, system } = process.cpuUsage();
  res
    .type('text/plain')
    .send(
      `rcs_process_cpu_seconds_total ${(user + system) / 1e6}\npeer_records_stored_total ${stored}\npeer_records_duplicate_total ${duplicates}\nprocess_resident_memory_bytes ${process.memoryUsage.rss()}\n`,
    );
});
const ids = await seedPeer(peer.store, arg('tests', 0), arg('messages', 0));
process.once('SIGTERM', () => void peer.stop().then(() => process.exit(0)));
console.log(JSON.stringify({ url: peer.url, ids }));

/** The data `bench/lib/seed.ts` gives the service, written to the peer's store. */
async function seedPeer(store: PeerStore, tests: number, messages: number): Promise<string[]> {
  const ids = seedIds(tests);
  for (const [t, correlationId] of ids.entries()) {
    await store.createTest(correlationId, { name: `seeded ${t}` });
    for (let sequence = 1; sequence <= messages; sequence++) {
      const final = sequence === messages;
      const payload = { step: sequence, status: 'running', note: `measurement ${sequence} of the run`, value: sequence * 1.5 };
      await store.addMessage({
        id: `${correlationId}:${sequence}`,
        correlationId,
        sequence,
        status: final ? 'COMPLETED' : 'RUNNING',
        final,
        payload,
        receivedAt: Date.now(),
      });
    }
  }
  return ids;
}
