/**
 * Fan-out: one test, many subscribers, the service beside its ceiling in the same run, a bare `ws`
 * server (`workers/bare-ws-fanout.ts`) that gets the same records from the broker and writes the
 * same `next` frames to the same number of subscriptions, and beside the common-stack peer
 * (`peers/common-stack/`, memory variant). Each runs in turn, in fresh processes, with
 * the same subscribers process measuring latency and the same `/metrics` line giving CPU per push.
 * Then, at `sustainSubscribers`, the highest rate each sustains: rates tried in increasing order
 * until p99 exceeds the bound or a push is still missing when the subscribers stop waiting (the
 * ceiling and the service only: each search lasts minutes on the full sizes).
 */
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { fetchWait, runPushScenario, type PushResult, type PushServer } from './lib/push-scenario.js';
import { stepSearch } from './lib/step-search.js';

/** The fan-out benchmark's sizes. */
export interface FanoutSizes {
  /** Subscriber counts compared at 100 records/s. */
  readonly fanout: number[];
  readonly fanoutSeconds: number;
  readonly sustainSubscribers: number;
  /** Rates tried, records/s, in increasing order. */
  readonly sustainRates: number[];
  readonly sustainSeconds: number;
  /** A rate is sustained when p99 stays at or under this and no push is missing. */
  readonly sustainP99Ms: number;
  /** Multiples of the service's highest sustained rate it is then overloaded at, beside the ceiling at the same rate. */
  readonly overloadFactors: number[];
  /** Many tests: `[tests, subscribers per test]` shapes, total rates tried (records/s over all tests), seconds per step. */
  readonly manyTests: { readonly shapes: Array<[number, number]>; readonly rates: number[]; readonly seconds: number };
}

const SERVERS: readonly PushServer[] = ['bare ws', 'service', 'peer', 'service ×2 on Redis Cluster'];
const RATE = 100;
const CPU_TARGET = 1.25;
const count = (n: number) => n.toLocaleString('en-US');

/** The service's p99 target at a subscriber count, if it has one. */
function p99Target(subscribers: number): { target: string; limit: number } | undefined {
  if (subscribers === 1000) return { target: '≤ 50 ms', limit: 50 };
  if (subscribers >= 5000) return { target: '≤ 200 ms', limit: 200 };
  return undefined;
}

function compare(subscribers: number, wait: string, results: Map<PushServer, PushResult>): Row[] {
  const ceiling = results.get('bare ws') as PushResult;
  const service = results.get('service') as PushResult;
  const peer = results.get('peer');
  const variant = `1 test × ${count(subscribers)} subscribers, ${RATE} records/s, ${wait}`;
  const ratio = service.cpuPerPushUs / ceiling.cpuPerPushUs;
  const p99 = p99Target(subscribers);
  const lost = (r: PushResult) => r.expected - r.received;
  // The service's figure over the peer's, beside its ratio to the ceiling (lower is better for both).
  const toPeer = (pick: (r: PushResult) => number) => (peer === undefined ? {} : { ratioToPeer: pick(service) / pick(peer) });
  const peerRows = (name: string, pick: (r: PushResult) => number, unit: string): Row[] =>
    peer === undefined
      ? []
      : [
          {
            benchmark: 'fan-out',
            variant: `${variant}: common-stack peer ${name}`,
            value: pick(peer),
            unit,
            ...(name === 'CPU per push' ? { ratio: peer.cpuPerPushUs / ceiling.cpuPerPushUs } : {}),
          },
        ];
  return [
    { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) CPU per push`, value: ceiling.cpuPerPushUs, unit: 'µs' },
    {
      benchmark: 'fan-out',
      variant: `${variant}: service CPU per push (ratio: service/ceiling)`,
      value: service.cpuPerPushUs,
      unit: 'µs',
      ratio,
      ...toPeer((r) => r.cpuPerPushUs),
      target: `≤ ${CPU_TARGET}×`,
      met: ratio <= CPU_TARGET,
    },
    ...peerRows('CPU per push', (r) => r.cpuPerPushUs, 'µs'),
    { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) p50`, value: ceiling.p50, unit: 'ms' },
    { benchmark: 'fan-out', variant: `${variant}: service p50`, value: service.p50, unit: 'ms', ...toPeer((r) => r.p50) },
    ...peerRows('p50', (r) => r.p50, 'ms'),
    { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) p99`, value: ceiling.p99, unit: 'ms' },
    {
      benchmark: 'fan-out',
      variant: `${variant}: service p99`,
      value: service.p99,
      unit: 'ms',
      ...toPeer((r) => r.p99),
      ...(p99 ? { target: p99.target, met: service.p99 <= p99.limit && lost(service) === 0 } : {}),
    },
    ...peerRows('p99', (r) => r.p99, 'ms'),
    { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) lost`, value: lost(ceiling), unit: 'messages', target: '0', met: lost(ceiling) === 0 },
    { benchmark: 'fan-out', variant: `${variant}: service lost`, value: lost(service), unit: 'messages', target: '0', met: lost(service) === 0 },
    ...peerRows('lost', lost, 'messages'),
    ...clusterRows(variant, ceiling, results.get('service ×2 on Redis Cluster')),
    // The ceiling is only a ceiling if it writes what the service writes: the first frame each server's clients got, digits and id masked.
    { benchmark: 'fan-out', variant: `${variant}: next frame bytes, bare ws (ceiling)`, value: ceiling.frameBytes ?? Number.NaN, unit: 'bytes' },
    {
      benchmark: 'fan-out',
      variant: `${variant}: next frame bytes, service`,
      value: service.frameBytes ?? Number.NaN,
      unit: 'bytes',
      target: 'same frame',
      met: service.frameShape !== undefined && service.frameShape === ceiling.frameShape,
    },
    ...(peer === undefined
      ? []
      : [
          {
            benchmark: 'fan-out',
            variant: `${variant}: next frame bytes, common-stack peer`,
            value: peer.frameBytes ?? Number.NaN,
            unit: 'bytes',
            target: 'same frame',
            met: peer.frameShape !== undefined && peer.frameShape === ceiling.frameShape,
          },
        ]),
  ];
}

/**
 * The rows of two replicas sharing a Redis Cluster, beside the one-process service: on this machine
 * they show what crossing Redis costs per push, not a speed-up (the replicas, the three primaries,
 * the subscribers and the producer share two cores).
 */
function clusterRows(variant: string, ceiling: PushResult, shared: PushResult | undefined): Row[] {
  if (shared === undefined) return [];
  const name = `${variant}: 2 service replicas on a Redis Cluster (3 primaries), subscribers split`;
  return [
    {
      benchmark: 'fan-out',
      variant: `${name}, CPU per push (both replicas)`,
      value: shared.cpuPerPushUs,
      unit: 'µs',
      ratio: shared.cpuPerPushUs / ceiling.cpuPerPushUs,
    },
    { benchmark: 'fan-out', variant: `${name}, p99`, value: shared.p99, unit: 'ms' },
    {
      benchmark: 'fan-out',
      variant: `${name}, lost`,
      value: shared.expected - shared.received,
      unit: 'messages',
      target: '0',
      met: shared.expected === shared.received,
    },
  ];
}

async function sustained(cluster: BenchBroker, sizes: FanoutSizes, server: PushServer): Promise<Row[]> {
  const n = sizes.sustainSubscribers;
  const bound = sizes.sustainP99Ms;
  const search = await stepSearch(
    sizes.sustainRates,
    (rate) =>
      runPushScenario(cluster, {
        label: `sustain ${count(n)} × ${rate}/s on ${cluster.kind}`,
        server,
        tests: 1,
        subscribersPerTest: n,
        rate,
        seconds: sizes.sustainSeconds,
        // Pushes still missing this long after the last record was due count as fallen behind (plus time for the producer to start).
        subscribersTimeoutMs: sizes.sustainSeconds * 1000 + bound + 15_000,
      }),
    (r) => r.received === r.expected && r.p99 <= bound,
  );
  const who = server === 'service' ? 'service' : 'bare ws (ceiling)';
  return [
    ...search.steps.map((step) => ({
      benchmark: 'fan-out',
      variant: `${count(n)} subscribers at ${step.rate} records/s (${count(step.rate * n)} pushes/s)${step.attempt === 2 ? ', repeated' : ''}: ${who} p99, ${count(step.result.expected - step.result.received)} missing`,
      value: step.result.p99,
      unit: 'ms',
      target: `≤ ${count(bound)} ms`,
      met: step.ok,
    })),
    {
      benchmark: 'fan-out',
      variant: `${count(n)} subscribers: highest rate ${who} sustains (${count(search.sustained * n)} pushes/s)`,
      value: search.sustained,
      unit: 'records/s',
    },
  ];
}

/** Runs the fan-out comparison and the sustained-rate search, service and ceiling each. */
export async function benchFanout(cluster: BenchBroker, sizes: FanoutSizes): Promise<Row[]> {
  const rows: Row[] = [];
  const wait = `fetch wait ${fetchWait(cluster.kind).ms} ms`;
  for (const subscribers of sizes.fanout) {
    const results = new Map<PushServer, PushResult>();
    for (const server of SERVERS) {
      results.set(
        server,
        await runPushScenario(cluster, {
          label: `fan-out ${count(subscribers)} on ${cluster.kind}`,
          server,
          tests: 1,
          subscribersPerTest: subscribers,
          rate: RATE,
          seconds: sizes.fanoutSeconds,
        }),
      );
    }
    rows.push(...compare(subscribers, wait, results));
  }
  const ceiling = await sustained(cluster, sizes, 'bare ws');
  const service = await sustained(cluster, sizes, 'service');
  const highest = (r: Row[]) => r.at(-1)?.value ?? 0;
  const last = service.pop() as Row;
  const ratio = highest(ceiling) > 0 ? last.value / highest(ceiling) : undefined;
  rows.push(...ceiling, ...service, { ...last, ...(ratio === undefined ? {} : { ratio }) });
  rows.push(...(await overloaded(cluster, sizes, last.value)));
  rows.push(...(await benchManyTests(cluster, sizes)));
  return rows;
}

/**
 * Past the highest rate the service holds (1.5× and 2× it, on the full run), the service and the
 * ceiling side by side: what a push costs and how much memory the process holds when pushes come
 * faster than they can be written. Without a cliff, the cost per push falls (more frames per write,
 * one execution per event) and latency degrades in proportion.
 */
async function overloaded(cluster: BenchBroker, sizes: FanoutSizes, held: number): Promise<Row[]> {
  const n = sizes.sustainSubscribers;
  const rows: Row[] = [];
  for (const factor of sizes.overloadFactors) {
    const rate = Math.max(1, Math.round(held * factor));
    const results = new Map<PushServer, PushResult>();
    for (const server of ['bare ws', 'service'] as const) {
      results.set(
        server,
        await runPushScenario(cluster, {
          label: `overload ${factor}× (${rate}/s) × ${count(n)} on ${cluster.kind}`,
          server,
          tests: 1,
          subscribersPerTest: n,
          rate,
          seconds: sizes.sustainSeconds,
          subscribersTimeoutMs: sizes.sustainSeconds * 4000 + 60_000,
        }),
      );
    }
    const ceiling = results.get('bare ws') as PushResult;
    const service = results.get('service') as PushResult;
    const variant = `${count(n)} subscribers at ${factor}× the service's highest sustained rate (${rate} records/s)`;
    const mb = (r: PushResult) => (r.rssPeakBytes ?? Number.NaN) / 2 ** 20;
    rows.push(
      { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) CPU per push`, value: ceiling.cpuPerPushUs, unit: 'µs' },
      {
        benchmark: 'fan-out',
        variant: `${variant}: service CPU per push`,
        value: service.cpuPerPushUs,
        unit: 'µs',
        ratio: service.cpuPerPushUs / ceiling.cpuPerPushUs,
      },
      { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) p99`, value: ceiling.p99, unit: 'ms' },
      { benchmark: 'fan-out', variant: `${variant}: service p99`, value: service.p99, unit: 'ms' },
      { benchmark: 'fan-out', variant: `${variant}: bare ws (ceiling) peak RSS`, value: mb(ceiling), unit: 'MiB' },
      { benchmark: 'fan-out', variant: `${variant}: service peak RSS`, value: mb(service), unit: 'MiB' },
      {
        benchmark: 'fan-out',
        variant: `${variant}: service lost`,
        value: service.expected - service.received,
        unit: 'messages',
        target: '0',
        met: service.expected === service.received,
      },
    );
  }
  return rows;
}

/**
 * Many tests, each its own event: subscribers spread over many tests (1,000 × 10 and 10,000 × 1 on
 * the full run), records spread over the tests, the highest total rate with p99 within 100 ms and
 * nothing lost, for the service and the ceiling (the same frames, written by a bare `ws` server).
 * Here no execution is shared between subscribers of different tests: what a push costs alone.
 */
export async function benchManyTests(cluster: BenchBroker, sizes: FanoutSizes): Promise<Row[]> {
  const { shapes, rates, seconds } = sizes.manyTests;
  const bound = 100;
  const rows: Row[] = [];
  for (const [tests, perTest] of shapes) {
    const found = new Map<PushServer, number>();
    for (const server of ['bare ws', 'service'] as const) {
      const search = await stepSearch(
        rates,
        (rate) =>
          runPushScenario(cluster, {
            label: `many tests ${count(tests)} × ${perTest} at ${rate}/s on ${cluster.kind}`,
            server,
            tests,
            subscribersPerTest: perTest,
            rate,
            seconds,
            subscribersTimeoutMs: seconds * 1000 + bound + 30_000,
          }),
        (r) => r.received === r.expected && r.p99 <= bound,
      );
      found.set(server, search.sustained);
      const who = server === 'service' ? 'service' : 'bare ws (ceiling)';
      for (const step of search.steps) {
        rows.push({
          benchmark: 'fan-out',
          variant: `${count(tests)} tests × ${perTest} subscribers at ${step.rate} records/s over them${step.attempt === 2 ? ', repeated' : ''}: ${who} p99, CPU per push ${step.result.cpuPerPushUs.toFixed(1)} µs, ${count(step.result.expected - step.result.received)} missing`,
          value: step.result.p99,
          unit: 'ms',
          target: `≤ ${bound} ms`,
          met: step.ok,
        });
      }
    }
    const service = found.get('service') ?? 0;
    const ceiling = found.get('bare ws') ?? 0;
    rows.push({
      benchmark: 'fan-out',
      variant: `${count(tests)} tests × ${perTest} subscribers: highest total rate the service holds with p99 ≤ ${bound} ms (ceiling ${count(ceiling)} records/s)`,
      value: service,
      unit: 'records/s',
      ...(ceiling > 0 ? { ratio: service / ceiling } : {}),
    });
  }
  return rows;
}
