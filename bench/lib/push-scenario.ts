/**
 * One push scenario, shared by the latency and fan-out benchmarks: a server (the service, the
 * bare `ws` fan-out ceiling or the common-stack peer), a subscribers process and a producer process, records produced at a
 * fixed rate through the broker, latency measured from the time each record was handed to the
 * producer to the moment a client received its push. The harness talks to either server only over
 * HTTP (`/readyz`, and the service's `/metrics` for its stages' delays) and graphql-ws, and reads
 * the server process's CPU time and resident memory from `/proc`, alike for every server.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../../src/config/config.js';
import type { BenchBroker, BrokerKind } from './broker.js';
import { startRedisCluster } from '../../tools/redis/redis-cluster.js';
import { runWorker, startWorker } from './worker.js';
import { untilConsuming } from './consuming.js';
import { BENCH_AUTH_ENV, benchToken } from './token.js';
import { sleep } from './until.js';

/** What the subscribers measured, and the server's CPU time per push received. */
export interface PushResult {
  /** Server CPU time per push received, in microseconds. */
  readonly cpuPerPushUs: number;
  /**
   * The server's CPU time per second while its subscribers were connected and nothing was produced
   * (milliseconds a second, over {@link IDLE_WINDOW_MS}): what every push at a low rate carries a
   * share of (at 100 records/s and one push a record, each push carries a hundredth of a second's).
   */
  readonly idleCpuMsPerS?: number;
  readonly received: number;
  readonly expected: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** The server's largest resident memory seen while records were produced and pushed (sampled every second), in bytes. */
  readonly rssPeakBytes?: number;
  /** Size in bytes of the first `testMessages` frame a client received, and its shape (digits and id masked). */
  readonly frameBytes?: number;
  readonly frameShape?: string;
  /**
   * The service's per-stage delays over the run (from `rcs_ingest_delay_seconds`, bucket upper
   * bounds in ms): record timestamp → fetched and → stored, p50 and p99. Absent for the ceiling
   * and the peer, which export no such histogram.
   */
  readonly stages?: StageDelays;
}

/** p50 and p99 of the record → fetched and record → stored delays, in ms (bucket upper bounds). */
export interface StageDelays {
  readonly fetched: { readonly p50: number; readonly p99: number };
  readonly stored: { readonly p50: number; readonly p99: number };
}

/**
 * Which server the subscribers talk to: the service, the bare `ws` ceiling, the common-stack peer
 * (memory variant), or two service replicas sharing a Redis Cluster of 3 primaries, the
 * subscribers split between them (each push crosses Redis: stored by whichever replica consumed
 * it, announced by sharded pub/sub to both).
 */
export type PushServer = 'service' | 'bare ws' | 'peer' | 'service ×2 on Redis Cluster';

// The mock broker holds every fetch until its wait expires, even when records arrive meanwhile, so
// on the mock the fetch wait is a floor under every latency measured here: 10 ms keeps that floor
// well under the target while polling the broker only 100 times a second. A real broker answers a
// fetch as soon as there is data, so on Kafka the service runs with its default fetch wait
// (KAFKA_FETCH_MAX_WAIT_MS unset), as it is deployed.
const MOCK_FETCH_MAX_WAIT_MS = 10;
const DEFAULT_FETCH_MAX_WAIT_MS = loadConfig({ ...BENCH_AUTH_ENV }).kafka.fetchMaxWaitMs;

/** The fetch wait on a broker: the `KAFKA_FETCH_MAX_WAIT_MS` the service is given (undefined: its default), and the value. */
export function fetchWait(kind: BrokerKind): { env: string | undefined; ms: number } {
  return kind === 'mock' ? { env: String(MOCK_FETCH_MAX_WAIT_MS), ms: MOCK_FETCH_MAX_WAIT_MS } : { env: undefined, ms: DEFAULT_FETCH_MAX_WAIT_MS };
}

/** A scenario's shape: `tests` tests with `subscribersPerTest` subscribers each, `rate` records/s for `seconds`. */
export interface PushScenario {
  readonly label: string;
  readonly server: PushServer;
  readonly tests: number;
  readonly subscribersPerTest: number;
  readonly rate: number;
  readonly seconds: number;
  /** How long the subscribers wait for every push before reporting what they got (default: 30 s + 1 ms per push). */
  readonly subscribersTimeoutMs?: number;
  /**
   * The checkout whose service runs (a `git worktree` of another commit with this one's
   * node_modules linked in), to read a change's before and after in one run; this one by default.
   */
  readonly checkout?: string;
}

function startServer(cluster: BenchBroker, s: PushScenario, topic: string) {
  if (s.server === 'bare ws')
    return startWorker('bare-ws-fanout', [cluster.bootstrapServers.join(','), topic, String(fetchWait(cluster.kind).ms), String(s.tests)]);
  // The peer gets the service's fetch wait on each broker (on Kafka kafkajs's default, 5 s, would be
  // a peer set up worse than the service for no reason of its own); its tests exist through their results.
  if (s.server === 'peer')
    return startWorker('peer', ['--tests', String(s.tests), '--messages', '0'], {
      KAFKA_BROKERS: cluster.bootstrapServers.join(','),
      KAFKA_RESULTS_TOPIC: topic,
      KAFKA_GROUP_ID: `bench-l-peer-${Date.now()}`,
      KAFKA_FETCH_MAX_WAIT_MS: String(fetchWait(cluster.kind).ms),
      PEER_VARIANT: 'memory',
    });
  const env = {
    ...BENCH_AUTH_ENV,
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: topic,
    KAFKA_GROUP_ID: `bench-l-${Date.now()}`,
    KAFKA_FETCH_MAX_WAIT_MS: fetchWait(cluster.kind).env,
    SUBSCRIPTION_QUEUE_LIMIT: '100000',
  };
  return startWorker('service', ['--tests', String(s.tests), '--messages', '0'], env, s.checkout === undefined ? {} : { cwd: s.checkout });
}

/** Runs one scenario on a fresh topic and fresh processes. */
export async function runPushScenario(cluster: BenchBroker, s: PushScenario): Promise<PushResult> {
  if (s.server === 'service ×2 on Redis Cluster') return runOnRedisCluster(cluster, s);
  const topic = `bench-push-${Date.now()}`;
  await cluster.createTopic(topic, 6);
  const server = startServer(cluster, s, topic);
  try {
    const { url, ids } = (await server.ready) as { url: string; ids: string[] };
    // Produce only once the consumer has joined its group, or the join is measured as latency.
    await untilConsuming(url);
    const records = Math.round(s.rate * s.seconds);
    const token = await benchToken();
    const timeout = s.subscribersTimeoutMs === undefined ? {} : { SUBSCRIBERS_TIMEOUT_MS: String(s.subscribersTimeoutMs) };
    const subscribers = startWorker('subscribers', [url, token, String(s.subscribersPerTest), String(records), ...ids], timeout);
    await subscribers.ready; // every subscription acknowledged
    const pid = server.child.pid as number;
    // Read before the window opens: a scrape of the service's /metrics costs it 10–40 ms of CPU at
    // 10,000 sockets (the ceiling has no such scrape), which the window would charge to its pushes.
    const delaysBefore = await delayBuckets(url);
    const idleCpuMsPerS = await idleCpu(pid);
    const cpuBefore = await cpuSeconds(pid);
    const rss = sampleRss(pid);
    await runWorker('produce', [cluster.bootstrapServers.join(','), topic, String(s.rate), String(s.seconds), ...ids]);
    const result = (await subscribers.result) as Omit<PushResult, 'cpuPerPushUs'>;
    const rssPeakBytes = await rss.stop();
    const cpuPerPushUs = (((await cpuSeconds(pid)) - cpuBefore) * 1e6) / Math.max(1, result.received);
    const stages = stageDelays(delaysBefore, await delayBuckets(url));
    const breakdown =
      stages === undefined ? '' : `; record → fetched p99 ${stages.fetched.p99} ms, → stored p99 ${stages.stored.p99} ms, → pushed p99 ${result.p99} ms`;
    const cut = (result as { cutOff?: Record<string, number> }).cutOff;
    console.error(
      `${s.label} (${s.server}): ${result.received}/${result.expected} received, p99 ${result.p99} ms, ${cpuPerPushUs.toFixed(1)} µs CPU per push (idle ${idleCpuMsPerS} ms/s)${breakdown}${cut === undefined ? '' : `; subscriptions ended by the server, by close code: ${JSON.stringify(cut)}`}`,
    );
    return { ...result, cpuPerPushUs, idleCpuMsPerS, ...(stages === undefined ? {} : { stages }), ...(rssPeakBytes === undefined ? {} : { rssPeakBytes }) };
  } finally {
    await server.stop();
  }
}

/**
 * Samples a server's resident memory every second until stopped; the peak, or undefined when none
 * was read. Read by the harness from `/proc` (what the service's `process_resident_memory_bytes`
 * reports too), not from the server's `/metrics`: a scrape of the service's every second cost it
 * about 4 % of its CPU at 10,000 sockets (its handles and file descriptors listed each time), which
 * the ceiling's `/metrics` does not, so the rows charged the service for the harness's reading.
 */
function sampleRss(pid: number): { stop(): Promise<number | undefined> } {
  let peak: number | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const rss = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
      if (Number.isFinite(rss)) peak = Math.max(peak ?? 0, rss);
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop.catch(() => undefined);
      return peak;
    },
  };
}

/** How long a server's idle CPU is read, after {@link IDLE_SETTLE_MS} for the subscribing to settle. */
const IDLE_WINDOW_MS = 2000;
const IDLE_SETTLE_MS = 1000;

/** A server's CPU time per second (ms) over a quiet window: subscribers connected, nothing produced. */
async function idleCpu(pid: number): Promise<number> {
  await sleep(IDLE_SETTLE_MS);
  const before = await cpuSeconds(pid);
  await sleep(IDLE_WINDOW_MS);
  return Math.round((((await cpuSeconds(pid)) - before) * 1e6) / IDLE_WINDOW_MS);
}

/** Clock ticks per second of `/proc/<pid>/stat`'s times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** A server process's CPU time so far (user and system), from `/proc`, read alike for every server. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Cumulative counts of `rcs_ingest_delay_seconds` by stage and bucket bound (ms); empty for a server without it. */
async function delayBuckets(url: string): Promise<Map<string, Array<[number, number]>>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<string, Array<[number, number]>>();
  for (const m of text.matchAll(/^rcs_ingest_delay_seconds_bucket\{stage="(\w+)",le="([^"]+)"\} (\d+)$/gm)) {
    const list = buckets.get(m[1] as string) ?? [];
    buckets.set(m[1] as string, list);
    list.push([m[2] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[2]) * 1000, Number(m[3])]);
  }
  return buckets;
}

/** The stages' p50 and p99 over what was observed between two readings; undefined without any. */
function stageDelays(before: Map<string, Array<[number, number]>>, after: Map<string, Array<[number, number]>>): StageDelays | undefined {
  const quantiles = (stage: string) => {
    const now = after.get(stage) ?? [];
    const then = before.get(stage) ?? [];
    const counts = now.map(([bound, n], i) => [bound, n - (then[i]?.[1] ?? 0)] as const);
    const total = counts.at(-1)?.[1] ?? 0;
    const at = (p: number) => counts.find(([, n]) => n >= p * total)?.[0] ?? Number.NaN;
    return total === 0 ? undefined : { p50: at(0.5), p99: at(0.99) };
  };
  const fetched = quantiles('fetched');
  const stored = quantiles('stored');
  return fetched === undefined || stored === undefined ? undefined : { fetched, stored };
}

/**
 * The scenario on two service replicas (one consumer group) sharing a Redis Cluster of 3 primaries
 * (no replicas: their copying would compete for this machine's cores too), half the subscribers on
 * each: CPU per push is the two replicas' CPU over every push received, p50 and p99 the worse of
 * the two halves.
 */
async function runOnRedisCluster(cluster: BenchBroker, s: PushScenario): Promise<PushResult> {
  const topic = `bench-push-${Date.now()}`;
  await cluster.createTopic(topic, 6);
  const redis = await startRedisCluster({ replicasPerPrimary: 0 });
  const env = {
    ...BENCH_AUTH_ENV,
    STATE_STORE: 'redis',
    REDIS_MODE: 'cluster',
    REDIS_CLUSTER_NODES: redis.seeds.join(','),
    // No replica to wait for (the cluster default, 1, would fail every write).
    REDIS_WAIT_REPLICAS: '0',
    REDIS_KEY_PREFIX: `bench-${Date.now()}`,
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: topic,
    KAFKA_GROUP_ID: `bench-l-cluster-${Date.now()}`,
    KAFKA_FETCH_MAX_WAIT_MS: fetchWait(cluster.kind).env,
    SUBSCRIPTION_QUEUE_LIMIT: '100000',
    // Two members of one group: the mock's coordinator holds every rebalance for the session
    // timeout less a second, waiting for more members (30 s by default, the harness's whole wait
    // for a consumer to join); the tests give the mock a short session for the same reason
    // (test/support/brokers.ts). A real broker completes the join as soon as both are in.
    ...(cluster.kind === 'mock' ? { KAFKA_SESSION_TIMEOUT_MS: '6000' } : {}),
  };
  // The first replica starts the tests; the second serves the same ones from Redis.
  const servers = [
    startWorker('service', ['--tests', String(s.tests), '--messages', '0'], env),
    startWorker('service', ['--tests', '0', '--messages', '0'], env),
  ];
  try {
    const ready = (await Promise.all(servers.map((server) => server.ready))) as Array<{ url: string; ids: string[] }>;
    const ids = ready[0]?.ids ?? [];
    for (const { url } of ready) await untilConsuming(url);
    const records = Math.round(s.rate * s.seconds);
    const token = await benchToken();
    const timeout = s.subscribersTimeoutMs === undefined ? {} : { SUBSCRIBERS_TIMEOUT_MS: String(s.subscribersTimeoutMs) };
    const halves = [Math.ceil(s.subscribersPerTest / 2), Math.floor(s.subscribersPerTest / 2)];
    const subscribers = ready.map(({ url }, i) => startWorker('subscribers', [url, token, String(halves[i]), String(records), ...ids], timeout));
    await Promise.all(subscribers.map((worker) => worker.ready));
    const pids = servers.map((server) => server.child.pid as number);
    const cpuBefore = await Promise.all(pids.map(cpuSeconds));
    await runWorker('produce', [cluster.bootstrapServers.join(','), topic, String(s.rate), String(s.seconds), ...ids]);
    const results = (await Promise.all(subscribers.map((worker) => worker.result))) as Array<Omit<PushResult, 'cpuPerPushUs'>>;
    const cpuAfter = await Promise.all(pids.map(cpuSeconds));
    const received = results.reduce((sum, r) => sum + r.received, 0);
    const cpuPerPushUs = ((cpuAfter.reduce((a, b) => a + b, 0) - cpuBefore.reduce((a, b) => a + b, 0)) * 1e6) / Math.max(1, received);
    const worst = (pick: (r: Omit<PushResult, 'cpuPerPushUs'>) => number) => Math.max(...results.map(pick));
    const first = results[0] as Omit<PushResult, 'cpuPerPushUs'>;
    const result: PushResult = {
      ...first,
      received,
      expected: results.reduce((sum, r) => sum + r.expected, 0),
      p50: worst((r) => r.p50),
      p99: worst((r) => r.p99),
      max: worst((r) => r.max),
      cpuPerPushUs,
    };
    console.error(`${s.label} (${s.server}): ${received}/${result.expected} received, p99 ${result.p99} ms, ${cpuPerPushUs.toFixed(1)} µs CPU per push`);
    return result;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await redis.stop();
  }
}
