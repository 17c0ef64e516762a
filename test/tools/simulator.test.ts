import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { createSimulator, planSequence, type Simulator } from '../../tools/simulator/simulator.js';
import { eventually } from '../support/graphql.js';

describe('planSequence', () => {
  it('swaps every second pair, repeats every third send, and ends with the final message', () => {
    expect(planSequence(5, 3, 2)).toEqual([1, 2, 4, 4, 3, 5, 6]);
    expect(planSequence(3, 0, 0)).toEqual([1, 2, 3, 4]);
    expect(planSequence(0, 3, 2)).toEqual([1]);
  });
});

describe('simulator', () => {
  let cluster: MockCluster;
  let simulator: Simulator;
  const received: Array<{ key: string; header: string; value: Record<string, any> }> = [];
  let kafka: Kafka;

  beforeAll(async () => {
    cluster = await startMockCluster({ brokers: 1, topics: [{ name: 'req', partitions: 1 }, { name: 'res', partitions: 2 }] });
    simulator = createSimulator({ brokers: cluster.bootstrapServers, requestsTopic: 'req', resultsTopic: 'res', intervalMs: 5 });
    await simulator.start();
    kafka = new Kafka({ clientId: 'sim-test', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'sim-reader', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'res', fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        received.push({ key: String(message.key), header: String(message.headers?.correlation_id), value: JSON.parse(String(message.value)) });
      },
    });
    afterAll(() => consumer.disconnect());
  });

  afterAll(async () => {
    await simulator?.dispose();
    await cluster?.stop();
  });

  async function request(correlationId: string, parameters: Record<string, unknown>) {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({
      topic: 'req',
      messages: [{ key: correlationId, headers: { correlation_id: correlationId }, value: JSON.stringify({ correlationId, input: { parameters }, requestedAt: new Date().toISOString() }) }],
    });
    await producer.disconnect();
    return eventually(() => {
      const mine = received.filter((r) => r.key === correlationId);
      return mine.some((r) => r.value.final) && mine;
    }, 20_000, `results of ${correlationId}`);
  }

  it('answers a request with the planned stream: duplicates, a swap, and the final message last', async () => {
    const results = await request('sim-1', { steps: 5 });
    expect(results.map((r) => r.value.sequence)).toEqual([1, 2, 4, 4, 3, 5, 6]);
    for (const r of results) {
      expect(r.header).toBe('sim-1');
      expect(r.value).toMatchObject({ correlationId: 'sim-1', messageId: `sim-1:${r.value.sequence}` });
      expect(Date.parse(r.value.producedAt)).not.toBeNaN();
    }
    expect(results.at(-1)?.value).toMatchObject({ final: true, status: 'completed', payload: { passed: true } });
    expect(results[0]?.value).toMatchObject({ status: 'running', payload: { step: 1, of: 5 } });
  });

  it('fails on request, and can send a clean stream', async () => {
    const results = await request('sim-2', { steps: 3, fail: true, duplicates: false, outOfOrder: false });
    expect(results.map((r) => r.value.sequence)).toEqual([1, 2, 3, 4]);
    expect(results.at(-1)?.value).toMatchObject({ final: true, status: 'failed', payload: { passed: false } });
  });
});
