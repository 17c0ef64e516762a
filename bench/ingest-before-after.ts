/**
 * The ingest benchmark's workers of two checkouts, run in alternate order on one pre-produced
 * topic and one broker, so that a change's before and after share the machine's moods: each round
 * runs every mode of one checkout and then of the other, the first checkout alternating. Prints the
 * rates and CPU per record of every round, on each of the worker's clocks, and their medians as JSON.
 *
 * Usage: npx tsx bench/ingest-before-after.ts <before checkout> [after checkout, default this one]
 * (a checkout is a directory with the worker at bench/workers/ingest.ts and its node_modules; a
 * `git worktree add <dir> <commit>` with a link to this checkout's node_modules will do).
 * BENCH_BROKER=kafka|mock (default kafka), BENCH_RECORDS (100,000), BENCH_ROUNDS (5),
 * BENCH_MODES (bare,memory,peer-memory,bare-redis,redis).
 */
import { fileURLToPath } from 'node:url';
import { startBroker, type BrokerKind } from './lib/broker.js';
import { produceIngestTopic } from './lib/ingest-topic.js';
import { median } from './lib/median.js';
import { runWorker } from './lib/worker.js';
import { workerBuild } from './lib/worker-build.js';

const [beforeTree, afterTree = fileURLToPath(new URL('../', import.meta.url))] = process.argv.slice(2);
if (beforeTree === undefined) {
  console.error('usage: ingest-before-after.ts <before checkout> [after checkout]');
  process.exit(2);
}
const records = Number(process.env.BENCH_RECORDS ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const modes = (process.env.BENCH_MODES ?? 'bare,memory,peer-memory,bare-redis,redis').split(',');
const trees = { before: beforeTree, after: afterTree } as const;

/** The worker's clocks beside its first: from the first fetch's start, and from its response's arrival. */
const clocks = ['fromFirstFetch', 'fromFirstResponse'] as const;
type Clock = (typeof clocks)[number];
/** One worker run in the checkout `cwd`: its final JSON line. */
const run = (cwd: string, args: string[]) =>
  runWorker<{ rate: number; cpuPerRecordUs?: number; busy?: number } & Partial<Record<Clock, { rate: number; cpuPerRecordUs: number }>>>(
    'ingest',
    args,
    {},
    { cwd, expose: true },
  );

// Both checkouts' workers compiled first (bench/lib/worker-build.ts): the build holds this process's event loop.
for (const tree of Object.values(trees)) workerBuild(tree);
const broker = await startBroker((process.env.BENCH_BROKER ?? 'kafka') as BrokerKind, 20);
const rates = new Map<string, number[]>();
/** CPU µs per record of each run, where the worker reports it. */
const cpu = new Map<string, number[]>();
/** Each run's rate and CPU µs a record on the other clocks, where the worker reports them. */
const onClocks = new Map<string, Array<{ rate: number; cpuPerRecordUs: number }>>();
try {
  const topic = await produceIngestTopic(broker, 'bench-before-after', 12, records);
  for (let round = 0; round < rounds; round++) {
    const order: Array<keyof typeof trees> = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const tree of order)
      for (const mode of modes) {
        const result = await run(trees[tree], [mode, broker.bootstrapServers.join(','), topic, String(records)]);
        const key = `${tree} ${mode}`;
        rates.set(key, [...(rates.get(key) ?? []), Math.round(result.rate)]);
        if (result.cpuPerRecordUs !== undefined) cpu.set(key, [...(cpu.get(key) ?? []), Number(result.cpuPerRecordUs.toFixed(3))]);
        for (const clock of clocks) {
          const onClock = result[clock];
          if (onClock === undefined) continue;
          const rounded = { rate: Math.round(onClock.rate), cpuPerRecordUs: Number(onClock.cpuPerRecordUs.toFixed(3)) };
          onClocks.set(`${key} ${clock}`, [...(onClocks.get(`${key} ${clock}`) ?? []), rounded]);
        }
      }
  }
} finally {
  await broker.stop();
}
/** The rows' ratios from each mode's rate and CPU µs a record, the same for either clock. */
const ratiosOf = (rate: (mode: string) => number, cpuPerRecord: (mode: string) => number) => ({
  memoryToBare: rate('memory') / rate('bare'),
  memoryToPeer: rate('memory') / rate('peer-memory'),
  redisToCeiling: rate('redis') / rate('bare-redis'),
  // CPU per record, bare over memory: the rate ratio without the waits on fetches.
  memoryToBareByCpu: cpuPerRecord('bare') / cpuPerRecord('memory'),
});
const medians = Object.fromEntries(
  (['before', 'after'] as const).map((tree) => {
    const of = (mode: string) => median(rates.get(`${tree} ${mode}`) ?? []);
    const cpuOf = (mode: string) => median(cpu.get(`${tree} ${mode}`) ?? []);
    // And on the other clocks.
    const onClock = (clock: Clock) => {
      const of = (mode: string, field: 'rate' | 'cpuPerRecordUs') => median((onClocks.get(`${tree} ${mode} ${clock}`) ?? []).map((one) => one[field]));
      return ratiosOf(
        (mode) => of(mode, 'rate'),
        (mode) => of(mode, 'cpuPerRecordUs'),
      );
    };
    const others = Object.fromEntries(clocks.map((clock) => [clock, onClock(clock)]));
    return [tree, { ...Object.fromEntries(modes.map((mode) => [mode, of(mode)])), ...ratiosOf(of, cpuOf), ...others }];
  }),
);
console.log(
  JSON.stringify(
    {
      records,
      rounds,
      at: new Date().toISOString(),
      trees,
      rates: Object.fromEntries(rates),
      cpuPerRecordUs: Object.fromEntries(cpu),
      onClocks: Object.fromEntries(onClocks),
      medians,
    },
    null,
    1,
  ),
);
process.exit(0);
