/**
 * The service as the benchmarks run it: the real `startService` with a memory store, on a free
 * port, optionally seeded with `--tests N --messages M` (through the store, as consumed records
 * would be), and with `--live N --rate R` N tests more that keep receiving R messages a second
 * between them, with rate limits off (the load comes from one principal and one address). Prints `{
 * url, ids }` once listening, runs until SIGTERM.
 */
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/base/logger.js';
import { startFromConfig } from '../../src/app/start-from-config.js';
import { BENCH_AUTH_ENV } from '../lib/token.js';
import { feedLive, seed, seedLive } from '../lib/seed.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
// Thousands of subscribers of one principal stand for as many users: no per-principal socket cap.
const config = loadConfig({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  ...BENCH_AUTH_ENV,
  WS_MAX_SUBSCRIPTIONS: '10000',
  WS_MAX_CONNECTIONS: '10000',
  RATE_LIMITS: 'off',
});
const logger = createLogger({ level: config.logLevel });
let ids: string[] = [];
let live: string[] = [];
let stopFeed = () => undefined as void;
const running = await startFromConfig(config, logger, async (state) => {
  // A Redis store refuses commands until its connection is up.
  for (
    let i = 0;
    i < 100 &&
    !(await state.log.check().then(
      () => true,
      () => false,
    ));
    i++
  )
    await new Promise((resolve) => setTimeout(resolve, 100));
  ids = await seed(state.log, arg('tests', 0), arg('messages', 0));
  live = await seedLive(state.log, arg('live', 0), arg('messages', 0));
  stopFeed = feedLive(state.log, live, arg('rate', 0), arg('messages', 0));
});
// BENCH_ALLOC_PROFILE=<file>: every allocation sampled (those collected since included), written at SIGTERM;
// with BENCH_ALLOC_MINOR=0, less those a scavenge collected: what outlived the young generation.
const allocations = process.env.BENCH_ALLOC_PROFILE;
if (allocations !== undefined) {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_MINOR !== '0',
  });
  process.prependOnceListener('SIGTERM', () => {
    void session.post('HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(allocations, JSON.stringify(profile)));
  });
}
// SIGUSR2: a full collection (the worker runs with --expose-gc), so that a memory reading counts
// what is held and not the garbage of what came before it.
process.on('SIGUSR2', () => (globalThis as { gc?: () => void }).gc?.());
process.once('SIGTERM', () => {
  stopFeed();
  void running.stop().then(() => process.exit(0));
});
console.log(JSON.stringify({ url: running.service.url, ids, live }));
