/**
 * The benchmark harness: `npm run bench` (full) or `npm run bench -- --smoke` (small sizes, run in
 * CI to keep the harness working; its figures mean nothing). For each broker of `--broker=kafka,mock`
 * (the default: both, one after the other) it starts the broker, runs each benchmark with its
 * ceiling side by side on it, and stops it; then prints one table and writes the figures to
 * bench/results/. Ratios are what count: absolute numbers depend on the machine's load.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg, totalmem } from 'node:os';
import { benchIngest, type Row } from './ingest.js';
import { benchMemory } from './memory.js';
import { benchCorrectness } from './correctness.js';
import { benchQueries } from './queries.js';
import { benchFanout } from './fanout.js';
import { benchLatency } from './latency.js';
import { parseBrokerOption, startBroker, type BenchBroker, type BrokerKind } from './lib/broker.js';
import { killWorkers } from './lib/worker.js';
import { workerBuild } from './lib/worker-build.js';
import { benchRebalance } from './rebalance.js';
import { benchTracing } from './tracing.js';
import { benchCurves, curveSizes } from './curves.js';
import { chartsOption, writeRunCharts } from './charts.js';

const smoke = process.argv.includes('--smoke');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const wanted = (name: string) => only === undefined || only.includes(name);
const sizes = smoke
  ? {
      tracing: 2_000,
      ingest: 5_000,
      memory: 20_000,
      queryDuration: 2,
      latencyIds: 50,
      latencyRates: [200],
      latencySeconds: 3,
      warmupSeconds: 2,
      fanout: [50],
      fanoutSeconds: 3,
      sustainSubscribers: 50,
      sustainRates: [100],
      sustainSeconds: 2,
      sustainP99Ms: 1000,
      overloadFactors: [2],
      manyTests: { shapes: [[10, 2]] as Array<[number, number]>, rates: [50], seconds: 2 },
      sockets: 200,
      followed: { tests: 200, perSocket: 20 },
    }
  : {
      tracing: 50_000,
      ingest: 100_000,
      memory: 1_000_000,
      queryDuration: 10,
      latencyIds: 1000,
      latencyRates: [1000, 2000],
      latencySeconds: 5,
      warmupSeconds: 15,
      fanout: [1000, 5000],
      fanoutSeconds: 10,
      sustainSubscribers: 5000,
      sustainRates: [1, 2, 5, 10, 20, 50, 100, 200, 400],
      sustainSeconds: 5,
      sustainP99Ms: 1000,
      overloadFactors: [1.5, 2],
      manyTests: {
        shapes: [
          [1000, 10],
          [10_000, 1],
        ] as Array<[number, number]>,
        rates: [100, 200, 500, 1000, 2000, 4000, 8000],
        seconds: 5,
      },
      sockets: 10_000,
      followed: { tests: 100_000, perSocket: 100 },
    };
const fanoutArg = process.argv.find((a) => a.startsWith('--fanout='));
if (fanoutArg !== undefined) sizes.fanout = fanoutArg.slice('--fanout='.length).split(',').map(Number);

// Smoke (CI) without --broker keeps the real-broker path working with one benchmark on Kafka, the
// latency one (broker start, topics, the service on its default fetch wait, pushes), and runs the
// rest on the mock only: every benchmark on Kafka roughly doubled the smoke run's time.
const smokeKafkaOnly = smoke && !process.argv.some((a) => a.startsWith('--broker=')) ? ['latency'] : undefined;
let brokers: BrokerKind[];
try {
  brokers = parseBrokerOption(process.argv, ['kafka', 'mock']);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
// Benchmarks whose data goes through the broker run on every broker listed, their rows marked with
// it; the others (the broker only feeds an idle consumer) run once, on the mock when it is listed.
const once = brokers.includes('mock') ? 'mock' : brokers[0];
const benchmarks: Array<{ name: string; everyBroker: boolean; run: (broker: BenchBroker) => Promise<Row[]> }> = [
  { name: 'ingest', everyBroker: true, run: (b) => benchIngest(b, sizes.ingest, smoke ? 1 : 5) },
  { name: 'queries', everyBroker: false, run: (b) => benchQueries(b, sizes.queryDuration) },
  { name: 'latency', everyBroker: true, run: (b) => benchLatency(b, sizes) },
  { name: 'fanout', everyBroker: true, run: (b) => benchFanout(b, sizes) },
  { name: 'memory', everyBroker: false, run: (b) => benchMemory(sizes.memory, sizes.sockets, sizes.followed, b) },
  // The cost of tracing lies in the service, not the broker: once, on the mock when it is listed.
  { name: 'tracing', everyBroker: false, run: (b) => benchTracing(b, sizes.tracing, smoke ? 1 : 3) },
  // The scenarios' sizes are small at any size: what they show is what was pushed, not how fast.
  { name: 'correctness', everyBroker: false, run: (b) => benchCorrectness(b, smoke) },
  // Cost curves: one short measurement per point, drawn as charts at the end of the run.
  { name: 'curves', everyBroker: false, run: (b) => benchCurves(b, curveSizes(process.argv.includes('--small-curves') ? 'small' : smoke ? 'smoke' : 'full')) },
];

// Rows per benchmark, so a benchmark's rows on each broker stand together in the table.
const measured = new Map<string, Row[]>(benchmarks.map((b) => [b.name, []]));
// The workers are compiled before any broker starts: the build holds this process's event loop.
workerBuild(fileURLToPath(new URL('../', import.meta.url)));
const started = Date.now();
let failures = 0;
mkdirSync(new URL('results/', import.meta.url), { recursive: true });
const file = new URL(`results/${smoke ? 'smoke' : 'bench'}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
/** Writes the rows measured so far (again at the end, with the load after the run). */
function writeResults(): void {
  const rows = [...measured.values()].flat();
  writeFileSync(file, `${JSON.stringify({ smoke, brokers, node: process.version, cores: cpus().length, loadBefore, loadAfter: loadText(), rows }, null, 2)}\n`);
}
// How quiet the machine was: the load averages (1, 5, 15 min) before and after, printed with the table.
const loadText = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadBefore = loadText();
let broker: BenchBroker | undefined;
// A benchmark that fails, or Ctrl-C, still stops the workers and the broker (no Java left behind).
const stopAll = async () => {
  killWorkers();
  await broker?.stop();
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)));
try {
  for (const kind of brokers) {
    const due = benchmarks.filter(
      (b) => wanted(b.name) && (b.everyBroker || kind === once) && (kind !== 'kafka' || (smokeKafkaOnly?.includes(b.name) ?? true)),
    );
    if (due.length === 0) continue;
    broker = await startBroker(kind, sizes.warmupSeconds);
    for (const b of due) {
      // A benchmark that fails is a row saying so, and the others still run: a long run is not
      // lost to one scenario. The run exits non-zero at the end (the smoke run in CI fails on it).
      let rows: Row[];
      const began = Date.now();
      try {
        rows = await b.run(broker);
        console.error(`${b.name} on ${kind}: ${Math.round((Date.now() - began) / 1000)} s`);
      } catch (error) {
        failures += 1;
        console.error(`${b.name} on ${kind} failed:`, error);
        killWorkers();
        rows = [
          {
            benchmark: b.name,
            variant: `FAILED: ${String((error as Error).message ?? error)
              .split('\n')[0]
              ?.slice(0, 70)}`,
            value: Number.NaN,
            unit: '',
            target: 'runs',
            met: false,
          },
        ];
      }
      measured.get(b.name)?.push(...rows.map((row) => (b.everyBroker ? { ...row, broker: kind } : row)));
      // The figures so far, after every benchmark: a run that dies later keeps what it measured.
      writeResults();
    }
    await stopAll();
    broker = undefined;
  }
} finally {
  await stopAll();
}
// Rebalance time starts Kafka nodes and service processes of its own (only a real broker's group
// coordinator rebalances as deployments will see it), so it runs once, after the others.
if (wanted('rebalance') && brokers.includes('kafka')) {
  try {
    measured.set(
      'rebalance',
      (await benchRebalance(smoke)).map((row) => ({ ...row, broker: 'kafka' as const })),
    );
  } finally {
    killWorkers();
  }
}
const rows = [...measured.values()].flat();

// A ratio far below 1 (the service's latency over the peer's, say) keeps two significant digits.
const ratioText = (r: number) => (r > 0 && r < 0.1 ? r.toPrecision(2) : r.toFixed(2));
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const lines = [
  `Result Collection Service benchmarks${smoke ? ' (smoke: sizes too small to mean anything)' : ''}`,
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${Math.round((Date.now() - started) / 1000)} s, load average ${loadBefore} before and ${loadText()} after`,
  '',
  `${'benchmark'.padEnd(12)} ${'broker'.padEnd(6)} ${'variant'.padEnd(84)} ${'value'.padStart(12)} ${'unit'.padEnd(14)} ${'ratio'.padStart(6)} ${'÷peer'.padStart(6)}  target     met`,
  ...rows.map((r) =>
    [
      r.benchmark.padEnd(12),
      (r.broker ?? '').padEnd(6),
      r.variant.padEnd(84),
      fmt(r.value).padStart(12),
      r.unit.padEnd(14),
      (r.ratio === undefined ? '' : r.ratio.toFixed(2)).padStart(6),
      (r.ratioToPeer === undefined ? '' : ratioText(r.ratioToPeer)).padStart(6),
      ` ${(r.target ?? '').padEnd(10)}`,
      r.met === undefined ? '' : r.met ? 'yes' : 'NO',
    ].join(' '),
  ),
];
console.log(lines.join('\n'));
writeResults();
console.log(`\nfigures written to ${file.pathname}`);
await writeRunCharts(
  rows,
  chartsOption(process.argv) ??
    new URL(
      `results/charts-${file.pathname
        .split('/')
        .at(-1)
        ?.replace(/\.json$/, '')}/`,
      import.meta.url,
    ).pathname,
);
process.exit(failures === 0 ? 0 : 1);
