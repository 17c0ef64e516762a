import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually } from '../support/graphql.js';

describe('mock cluster', () => {
  let cluster: MockCluster;
  beforeAll(async () => {
    cluster = await startMockCluster({ brokers: 3, topics: [{ name: 'six', partitions: 6 }] });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('prints one bootstrap address per broker', () => {
    expect(cluster.bootstrapServers).toHaveLength(3);
    for (const server of cluster.bootstrapServers) expect(server).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('speaks the Kafka protocol to kafkajs: produce, then consume in a group', async () => {
    const kafka = new Kafka({ clientId: 'mock-test', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({ topic: 'six', messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets('six');
    await admin.disconnect();
    expect(offsets).toHaveLength(6);
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(30);

    const consumer = kafka.consumer({ groupId: 'mock-test-group', maxWaitTimeInMs: 100 });
    const seen = new Set<string>();
    await consumer.connect();
    await consumer.subscribe({ topic: 'six', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(String(message.value)) });
    await eventually(() => seen.size === 30, 20_000, 'all 30 records');
    await consumer.disconnect();
  });

  it('answers fault commands with OK and refuses bad ones with the reason', async () => {
    await cluster.command('rtt 2 10');
    await cluster.command('rtt 2 0');
    await cluster.command('down 3');
    await cluster.command('up 3');
    await cluster.command('error Fetch 6 6');
    await cluster.createTopic('created-later', 2);
    await expect(cluster.command('nonsense')).rejects.toThrow(/unknown command/);
    await expect(cluster.command('rtt x')).rejects.toThrow(/usage/);
    // The queue survives a refused command.
    await cluster.command('up 3');
  });

  it('stops, and commands after that are refused', async () => {
    const extra = await startMockCluster();
    await extra.stop();
    await extra.stop();
    await expect(extra.command('up 1')).rejects.toThrow();
  });
});
