/**
 * The benchmark harness: `npm run bench` (full) or `npm run bench -- --smoke` (small sizes, run in
 * CI to keep the harness working; its figures mean nothing). Starts a mock Kafka cluster, runs each
 * benchmark with its ceiling side by side in the same run, prints one table and writes the figures
 * to bench/results/. Ratios are what count: absolute numbers depend on the machine's load.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { startMockCluster } from '../tools/mock-cluster/mock-cluster.js';
import { benchIngest, type Row } from './ingest.js';
import { benchMemory } from './memory.js';
import { benchQueries } from './queries.js';
import { benchFanout, benchLatency } from './latency.js';
import { killWorkers } from './lib/worker.js';
import { benchRebalance } from './rebalance.js';

const smoke = process.argv.includes('--smoke');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const wanted = (name: string) => only === undefined || only.includes(name);
const sizes = smoke
  ? { ingest: 5_000, memory: 20_000, queryDuration: 2, latencyIds: 50, latencyRates: [200], fanout: [50], fanoutSeconds: 3, sockets: 200 }
  : { ingest: 100_000, memory: 1_000_000, queryDuration: 10, latencyIds: 1000, latencyRates: [1000, 2000], fanout: [1000, 5000], fanoutSeconds: 10, sockets: 10_000 };
const fanoutArg = process.argv.find((a) => a.startsWith('--fanout='));
if (fanoutArg !== undefined) sizes.fanout = fanoutArg.slice('--fanout='.length).split(',').map(Number);

const cluster = await startMockCluster({ brokers: 1 });
const rows: Row[] = [];
const started = Date.now();
try {
  if (wanted('ingest')) rows.push(...(await benchIngest(cluster, sizes.ingest, smoke ? 1 : 5)));
  if (wanted('queries')) rows.push(...(await benchQueries(cluster, sizes.queryDuration)));
  if (wanted('latency')) rows.push(...(await benchLatency(cluster, sizes)));
  if (wanted('fanout')) rows.push(...(await benchFanout(cluster, sizes)));
  if (wanted('memory')) rows.push(...(await benchMemory(sizes.memory, sizes.sockets, cluster)));
  // Real Kafka, started by the benchmark itself (the mock's group coordinator rebalances differently).
  if (wanted('rebalance')) rows.push(...(await benchRebalance(smoke)));
} finally {
  killWorkers();
  await cluster.stop();
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const lines = [
  `Result Collection Service benchmarks${smoke ? ' (smoke: sizes too small to mean anything)' : ''}`,
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${Math.round((Date.now() - started) / 1000)} s`,
  '',
  `${'benchmark'.padEnd(12)} ${'variant'.padEnd(78)} ${'value'.padStart(12)} ${'unit'.padEnd(14)} ${'ratio'.padStart(6)}  target     met`,
  ...rows.map((r) =>
    [r.benchmark.padEnd(12), r.variant.padEnd(78), fmt(r.value).padStart(12), r.unit.padEnd(14), (r.ratio === undefined ? '' : r.ratio.toFixed(2)).padStart(6), ` ${(r.target ?? '').padEnd(10)}`, r.met === undefined ? '' : r.met ? 'yes' : 'NO'].join(' '),
  ),
];
console.log(lines.join('\n'));
mkdirSync(new URL('results/', import.meta.url), { recursive: true });
const file = new URL(`results/${smoke ? 'smoke' : 'bench'}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(file, `${JSON.stringify({ smoke, node: process.version, cores: cpus().length, rows }, null, 2)}\n`);
console.log(`\nfigures written to ${file.pathname}`);
process.exit(0);
