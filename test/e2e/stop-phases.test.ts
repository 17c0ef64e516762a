/**
 * A real service stops through its stop phases: a part that fails to stop is logged with its phase
 * and name, and every other part still stops (the consumer leaves, the HTTP listener closes); a
 * second stop() waits for the first and stops nothing twice.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { startTestService, uniqueTopics } from '../support/service.js';

const topics = uniqueTopics('stop-phases');
let cluster: MockCluster;

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
});

afterAll(async () => {
  await cluster?.stop();
});

describe('stopping a service', () => {
  it('logs a part that fails to stop and still stops the others; twice stops once', { timeout: 60_000 }, async () => {
    const lines: Array<{ level: number; msg: string; phase?: string; part?: string; err?: { message: string } }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    let storeStops = 0;
    const svc = await startTestService({
      brokers: cluster.bootstrapServers,
      logger,
      env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
      wrapLog: (store): ResultLog => ({
        ...store,
        async dispose() {
          storeStops += 1;
          throw new Error('the result log refused to close');
        },
      }),
    });
    await svc.ready();

    await expect(Promise.all([svc.stop(), svc.stop()])).resolves.toEqual([undefined, undefined]);
    await svc.stop();

    expect(storeStops).toBe(1);
    const failure = lines.find((l) => l.part === 'result log');
    expect(failure).toMatchObject({ level: 50, phase: 'state', err: { message: 'the result log refused to close' } });
    // The other parts stopped regardless: the consumer left its group, the listener is closed.
    expect(svc.service.broker.consumer.state().state).toBe('stopped');
    expect(svc.service.httpServer.listening).toBe(false);
    await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();
    expect(lines.filter((l) => l.msg === 'stopped')).toHaveLength(1);
  });
});
