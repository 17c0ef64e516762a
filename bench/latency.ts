/**
 * End-to-end latency: one subscriber per test, records at a fixed rate, measured from the timestamp
 * carried in each record to the moment a client receives the push. The service, the subscribers
 * and the producer are three separate processes (`lib/push-scenario.ts`); then the same for the
 * common-stack peer (`peers/common-stack/`, memory variant), in fresh processes.
 */
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { fetchWait, runPushScenario } from './lib/push-scenario.js';

/** Runs the end-to-end latency scenarios. */
export async function benchLatency(cluster: BenchBroker, sizes: { latencyIds: number; latencyRates: number[]; latencySeconds: number }): Promise<Row[]> {
  const rows: Row[] = [];
  const wait = `fetch wait ${fetchWait(cluster.kind).ms} ms`;
  for (const rate of sizes.latencyRates) {
    const scenario = { tests: sizes.latencyIds, subscribersPerTest: 1, rate, seconds: sizes.latencySeconds };
    const r = await runPushScenario(cluster, { label: `latency ${rate}/s on ${cluster.kind}`, server: 'service', ...scenario });
    const peer = await runPushScenario(cluster, { label: `latency ${rate}/s on ${cluster.kind}`, server: 'peer', ...scenario });
    const lost = r.expected - r.received;
    const variant = `${sizes.latencyIds} tests × 1 subscriber, ${rate} records/s, ${wait}`;
    rows.push(
      { benchmark: 'e2e latency', variant: `${variant}: p50`, value: r.p50, unit: 'ms', ratioToPeer: r.p50 / peer.p50 },
      {
        benchmark: 'e2e latency',
        variant: `${variant}: p99`,
        value: r.p99,
        unit: 'ms',
        ratioToPeer: r.p99 / peer.p99,
        ...(rate >= 2000 ? { target: '≤ 25 ms', met: r.p99 <= 25 && lost === 0 } : {}),
      },
      { benchmark: 'e2e latency', variant: `${variant}: max`, value: r.max, unit: 'ms' },
      // Where the time goes: cumulative from the record's timestamp, the last stage the client's own.
      ...(r.stages === undefined
        ? []
        : [
            { benchmark: 'e2e latency', variant: `${variant}: p99 to fetched`, value: r.stages.fetched.p99, unit: 'ms' },
            { benchmark: 'e2e latency', variant: `${variant}: p99 to stored`, value: r.stages.stored.p99, unit: 'ms' },
            { benchmark: 'e2e latency', variant: `${variant}: p99 to pushed (client)`, value: r.p99, unit: 'ms' },
          ]),
      { benchmark: 'e2e latency', variant: `${variant}: lost`, value: lost, unit: 'messages', target: '0', met: lost === 0 },
      { benchmark: 'e2e latency', variant: `${variant}: common-stack peer p50`, value: peer.p50, unit: 'ms' },
      { benchmark: 'e2e latency', variant: `${variant}: common-stack peer p99`, value: peer.p99, unit: 'ms' },
      { benchmark: 'e2e latency', variant: `${variant}: common-stack peer lost`, value: peer.expected - peer.received, unit: 'messages' },
    );
  }
  return rows;
}
