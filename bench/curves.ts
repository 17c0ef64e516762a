/**
 * Cost curves: how the cost of one unit of work grows with the amount of work around it, one
 * short measurement per point, each point a row of the table and a point of a chart
 * (`lib/charts-from-rows.ts`):
 * - `test()` with 100 messages, requests/s and p99, against the messages stored in total (100 per
 *   test): the design promises a flat line, a read touching only its own test;
 * - CPU per push against the subscribers of one test, the service beside the bare `ws` ceiling;
 * - ingest rate against the topic's partitions, the service's consumer into the memory store
 *   beside the bare kafkajs consumer;
 * - heap per stored message against the messages stored.
 * Runs once, on the mock when it is listed (the broker only matters to the fan-out and ingest
 * points, and their ceilings run on the same broker).
 */
import type { BenchBroker } from './lib/broker.js';
import type { CurveRow } from './lib/charts-from-rows.js';
import { produceIngestTopic } from './lib/ingest-topic.js';
import { runPushScenario } from './lib/push-scenario.js';
import { runWorker, startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';
import { TEST_100, load, type Target } from './queries.js';

/** The x values of each curve and the time spent on each point. */
export interface CurveSizes {
  /** Messages stored in total, 100 per test. */
  readonly storedMessages: number[];
  readonly querySeconds: number;
  readonly subscribers: number[];
  readonly pushSeconds: number;
  readonly partitions: number[];
  /** Records consumed per ingest point. */
  readonly ingestRecords: number;
  readonly heapMessages: number[];
  /** Whether the fan-out and ingest curves measure their ceilings too (the query curve always does). */
  readonly ceilings: boolean;
}

/**
 * The curves' sizes. `full` fits in about 6 minutes on a 2-core machine; `smoke` (CI) one point per
 * curve but the heap's, the ceilings of the query curve only, in well under a minute; `small` a few
 * points of each, ceilings included, in about 3 minutes: charts that show the shape without a full run.
 */
export function curveSizes(size: 'smoke' | 'small' | 'full'): CurveSizes {
  if (size === 'smoke')
    return {
      storedMessages: [1_000],
      querySeconds: 1,
      subscribers: [20],
      pushSeconds: 1,
      partitions: [3],
      ingestRecords: 2_000,
      heapMessages: [2_000, 10_000],
      ceilings: false,
    };
  if (size === 'small')
    return {
      storedMessages: [1_000, 10_000, 100_000],
      querySeconds: 2,
      subscribers: [20, 100, 500],
      pushSeconds: 1,
      partitions: [1, 3, 6, 12],
      ingestRecords: 10_000,
      heapMessages: [10_000, 100_000, 300_000],
      ceilings: true,
    };
  return {
    storedMessages: [1_000, 10_000, 100_000, 1_000_000],
    querySeconds: 3,
    subscribers: [100, 500, 1000, 2000, 5000],
    pushSeconds: 2,
    partitions: [1, 3, 6, 12, 24],
    ingestRecords: 50_000,
    heapMessages: [10_000, 100_000, 300_000, 1_000_000],
    ceilings: true,
  };
}

const count = (n: number) => n.toLocaleString('en-US');
const row = (curve: string, series: string, x: number, variant: string, value: number, unit: string): CurveRow => ({
  benchmark: 'curves',
  variant,
  value,
  unit,
  point: { curve, series, x },
});

/** `test()` with 100 messages against the service and bare graphql-js, each seeded with `stored` messages in tests of 100. */
async function queryPoints(cluster: BenchBroker, stored: number, seconds: number): Promise<CurveRow[]> {
  const tests = String(Math.max(1, Math.round(stored / 100)));
  const env = {
    ...BENCH_AUTH_ENV,
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_GROUP_ID: `bench-curves-${Date.now()}`,
    GRAPHQL_MAX_COST: '1000000',
    STORE_MAX_TESTS: String(Number(tests) * 2),
  };
  // Both seed at once (seeding a million messages takes a while); they are measured one at a time.
  const service = startWorker('service', ['--tests', tests, '--messages', '100'], env);
  const bare = startWorker('bare-graphql', ['--tests', tests, '--messages', '100']);
  try {
    const { url, ids } = (await service.ready) as { url: string; ids: string[] };
    const { url: bareUrl } = (await bare.ready) as { url: string };
    // A test in the middle of the store, not the first one seeded.
    const id = ids[Math.floor(ids.length / 2)];
    const body = JSON.stringify({ query: TEST_100, variables: { id } });
    const targets: Array<[string, Target]> = [
      ['graphql-js on node:http (ceiling)', { url: `${bareUrl}/graphql`, method: 'POST', headers: { 'content-type': 'application/json' }, body }],
      [
        'service /graphql',
        { url: `${url}/graphql`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${await benchToken()}` }, body },
      ],
    ];
    const rows: CurveRow[] = [];
    for (const [series, target] of targets) {
      if (seconds > 1) await load(target, 1); // warm up (not at toy sizes, where the figures mean nothing)
      const saturated = await load(target, seconds);
      const half = await load(target, seconds, Math.max(1, Math.floor(saturated.rps / 2)));
      rows.push(
        row(
          'query-rate-by-stored-messages',
          series,
          stored,
          `test() with 100 messages, ${count(stored)} messages stored: ${series} requests/s`,
          saturated.rps,
          'requests/s',
        ),
        row(
          'query-p99-by-stored-messages',
          series,
          stored,
          `test() with 100 messages, ${count(stored)} messages stored: ${series} p99 at half rate`,
          half.p99,
          'ms',
        ),
      );
    }
    return rows;
  } finally {
    await service.stop();
    await bare.stop();
  }
}

/** CPU per push at `subscribers` subscribers of one test, 100 records/s, the service and the bare `ws` ceiling. */
async function pushPoints(cluster: BenchBroker, subscribers: number, seconds: number, ceiling: boolean): Promise<CurveRow[]> {
  const rows: CurveRow[] = [];
  const servers = [
    ['bare ws', 'bare ws (ceiling)'],
    ['service', 'service'],
  ] as const;
  for (const [server, series] of ceiling ? servers : servers.slice(1)) {
    const result = await runPushScenario(cluster, {
      label: `curve ${count(subscribers)} subscribers`,
      server,
      tests: 1,
      subscribersPerTest: subscribers,
      rate: 100,
      seconds,
    });
    rows.push(
      row(
        'cpu-per-push-by-subscribers',
        series,
        subscribers,
        `1 test × ${count(subscribers)} subscribers, 100 records/s: ${series} CPU per push (${result.expected - result.received} lost)`,
        result.cpuPerPushUs,
        'µs',
      ),
    );
  }
  return rows;
}

const MOCK_RECORDS_PER_PARTITION = 8_000;
// A point reads at most some 50,000 records, in seconds: minutes mean the consumer is stuck.
const INGEST_POINT_TIMEOUT_MS = 180_000;

/** Ingest rate from a topic of `partitions` partitions: the bare consumer and the service into memory, on the same records. */
async function ingestPoints(cluster: BenchBroker, partitions: number, wanted: number, ceiling: boolean): Promise<CurveRow[]> {
  // The mock keeps only a few MB of a partition's log and drops the oldest records beyond: a
  // consumer reading from the start then never reaches the end. At most as many records per
  // partition as the ingest benchmark puts in each (100,000 over 12).
  const records = cluster.kind === 'mock' ? Math.min(wanted, partitions * MOCK_RECORDS_PER_PARTITION) : wanted;
  const topic = await produceIngestTopic(cluster, `bench-curves-${partitions}`, partitions, records);
  const rows: CurveRow[] = [];
  const modes = [
    ['bare', 'bare kafkajs consumer (ceiling)'],
    ['memory', 'service → memory store'],
  ] as const;
  for (const [mode, series] of ceiling ? modes : modes.slice(1)) {
    const { rate } = await runWorker<{ rate: number }>(
      'ingest',
      [mode, cluster.bootstrapServers.join(','), topic, String(records)],
      {},
      { timeoutMs: INGEST_POINT_TIMEOUT_MS },
    );
    rows.push(
      row(
        'ingest-rate-by-partitions',
        series,
        partitions,
        `${count(records)} records in ${partitions} partition${partitions === 1 ? '' : 's'}: ${series}`,
        rate,
        'records/s',
      ),
    );
  }
  return rows;
}

/** Heap per stored message with `messages` messages in the memory store (1,000 tests). */
async function heapPoint(messages: number): Promise<CurveRow> {
  const heap = await runWorker<{ perMessage: number; payloadBytes: number }>('memory', [String(messages)]);
  return row(
    'heap-per-message-by-stored-messages',
    `memory store (${heap.payloadBytes}-byte payloads)`,
    messages,
    `heap per stored message, ${count(messages)} stored`,
    heap.perMessage,
    'bytes',
  );
}

/** Measures every curve at its sizes, one point after the other; the rows carry their points. */
export async function benchCurves(cluster: BenchBroker, sizes: CurveSizes): Promise<CurveRow[]> {
  const rows: CurveRow[] = [];
  const curves: Array<[string, Array<() => Promise<CurveRow[]>>]> = [
    ['queries', sizes.storedMessages.map((n) => () => queryPoints(cluster, n, sizes.querySeconds))],
    ['fan-out', sizes.subscribers.map((n) => () => pushPoints(cluster, n, sizes.pushSeconds, sizes.ceilings))],
    ['ingest', sizes.partitions.map((p) => () => ingestPoints(cluster, p, sizes.ingestRecords, sizes.ceilings))],
    ['heap', sizes.heapMessages.map((n) => async () => [await heapPoint(n)])],
  ];
  for (const [name, points] of curves) {
    const started = Date.now();
    for (const point of points) rows.push(...(await point()));
    console.error(`curves: ${name} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  return rows;
}
