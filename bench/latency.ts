/**
 * End-to-end latency (one subscriber per test, records at a fixed rate) and fan-out (one test,
 * many subscribers), measured from the timestamp carried in each record to the moment a client
 * receives the push. The service, the subscribers and the producer are three separate processes.
 */
import type { MockCluster } from '../tools/mock-cluster/mock-cluster.js';
import type { Row } from './ingest.js';
import { runWorker, startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';

interface Latency {
  /** Service CPU time per push received, in microseconds. */
  readonly cpuPerPushUs?: number;
  readonly received: number;
  readonly expected: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

// The mock broker holds every fetch until its wait expires, even when records arrive meanwhile (a
// real broker answers as soon as there is data), so the fetch wait is a floor under every latency
// measured here. 10 ms keeps that floor well under the target while polling the broker only
// 100 times a second.
const FETCH_MAX_WAIT_MS = '10';

async function scenario(cluster: MockCluster, label: string, tests: number, subscribersPerTest: number, rate: number, seconds: number): Promise<Latency> {
  const topic = `bench-latency-${Date.now()}`;
  await cluster.createTopic(topic, 6);
  const env = { ...BENCH_AUTH_ENV, KAFKA_BROKERS: cluster.bootstrapServers.join(','), KAFKA_RESULTS_TOPIC: topic, KAFKA_GROUP_ID: `bench-l-${Date.now()}`, KAFKA_FETCH_MAX_WAIT_MS: FETCH_MAX_WAIT_MS, SUBSCRIPTION_QUEUE_LIMIT: '100000' };
  const service = startWorker('service', ['--tests', String(tests), '--messages', '0'], env);
  try {
    const { url, ids } = (await service.ready) as { url: string; ids: string[] };
    // Produce only once the consumer has joined its group, or the join is measured as latency.
    for (let i = 0; i < 300 && (await fetch(`${url}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    const records = Math.round(rate * seconds);
    const token = await benchToken();
    const subscribers = startWorker('subscribers', [url, token, String(subscribersPerTest), String(records), ...ids]);
    await subscribers.ready; // every subscription acknowledged
    const cpuBefore = await serviceCpuSeconds(url);
    await runWorker('produce', [cluster.bootstrapServers.join(','), topic, String(rate), String(seconds), ...ids]);
    const result = (await subscribers.result) as Latency;
    const cpuPerPushUs = ((await serviceCpuSeconds(url)) - cpuBefore) * 1e6 / Math.max(1, result.received);
    console.error(`${label}: ${result.received}/${result.expected} received, service CPU ${cpuPerPushUs.toFixed(1)} µs per push`);
    return { ...result, cpuPerPushUs };
  } finally {
    await service.stop();
  }
}

/** The service's CPU time so far, from its Prometheus metrics. */
async function serviceCpuSeconds(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('rcs_process_cpu_seconds_total '));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/** Runs the end-to-end latency scenarios. */
export async function benchLatency(cluster: MockCluster, sizes: { latencyIds: number; latencyRates: number[] }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const rate of sizes.latencyRates) {
    const r = await scenario(cluster, `latency ${rate}/s`, sizes.latencyIds, 1, rate, 5);
    const lost = r.expected - r.received;
    rows.push(
      { benchmark: 'e2e latency', variant: `${sizes.latencyIds} tests × 1 subscriber, ${rate} records/s: p50`, value: r.p50, unit: 'ms' },
      { benchmark: 'e2e latency', variant: `${sizes.latencyIds} tests × 1 subscriber, ${rate} records/s: p99`, value: r.p99, unit: 'ms', ...(rate >= 2000 ? { target: '≤ 25 ms', met: r.p99 <= 25 && lost === 0 } : {}) },
      { benchmark: 'e2e latency', variant: `${sizes.latencyIds} tests × 1 subscriber, ${rate} records/s: max`, value: r.max, unit: 'ms' },
      { benchmark: 'e2e latency', variant: `${sizes.latencyIds} tests × 1 subscriber, ${rate} records/s: lost`, value: lost, unit: 'messages', target: '0', met: lost === 0 },
    );
  }
  return rows;
}

/** Runs the fan-out scenarios. */
export async function benchFanout(cluster: MockCluster, sizes: { fanout: number[]; fanoutSeconds: number }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const subscribers of sizes.fanout) {
    const r = await scenario(cluster, `fan-out ${subscribers}`, 1, subscribers, 100, sizes.fanoutSeconds);
    rows.push(
      { benchmark: 'fan-out', variant: `1 test × ${subscribers} subscribers, 100 records/s: p50`, value: r.p50, unit: 'ms' },
      { benchmark: 'fan-out', variant: `1 test × ${subscribers} subscribers, 100 records/s: p99`, value: r.p99, unit: 'ms', ...(subscribers >= 5000 ? { target: '≤ 200 ms', met: r.p99 <= 200 } : {}) },
      { benchmark: 'fan-out', variant: `1 test × ${subscribers} subscribers, 100 records/s: lost`, value: r.expected - r.received, unit: 'messages', target: '0', met: r.expected === r.received },
      { benchmark: 'fan-out', variant: `1 test × ${subscribers} subscribers, 100 records/s: service CPU per push`, value: r.cpuPerPushUs ?? Number.NaN, unit: 'µs' },
    );
  }
  return rows;
}
