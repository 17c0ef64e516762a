/**
 * The mock cluster as the tests use it: kafkajs over real TCP against 1 and 3 brokers, topics
 * created from the cluster side, and the command channel (faults, errors, shutdown).
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';

const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** Starts a cluster, runs `body`, and always stops the cluster. */
async function withCluster(options: Parameters<typeof startMockCluster>[0], body: (cluster: MockCluster) => Promise<void>) {
  const cluster = await startMockCluster(options);
  try {
    await body(cluster);
  } finally {
    await cluster.stop();
  }
}

/** Produces `count` keyed records, then reads the topic from the beginning with a fresh group. */
async function roundTrip(brokers: string[], topic: string, count: number) {
  const kafka = new Kafka({ clientId: 'mock-cluster-test', brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  await producer.disconnect();

  // A short fetch wait keeps disconnect() from waiting out an idle fetch (5 s by default).
  const consumer = kafka.consumer({ groupId: unique('g'), maxWaitTimeInMs: 100 });
  const seen: Array<{ partition: number; value: string }> = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      seen.push({ partition, value: String(message.value) });
      if (seen.length === count) done();
    },
  });
  await all;
  await consumer.disconnect();
  return seen;
}

describe('mock cluster', () => {
  it('one broker: bootstrap list, metadata, produce and consume', async () => {
    const topic = unique('one');
    await withCluster({ topics: [{ name: topic, partitions: 3 }] }, async (cluster) => {
      expect(cluster.bootstrapServers).toHaveLength(1);
      expect(cluster.bootstrapServers[0]).toMatch(/^127\.0\.0\.1:\d+$/);

      const admin = new Kafka({ brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.disconnect();
      expect(metadata.topics[0]?.partitions).toHaveLength(3);

      const seen = await roundTrip(cluster.bootstrapServers, topic, 30);
      expect(seen.map((r) => r.value).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `v${i}`).sort());
    });
  });

  it('three brokers: partitions led by every broker round-trip, and leaders move on command', async () => {
    const topic = unique('three');
    await withCluster({ brokers: 3, topics: [{ name: topic, partitions: 6 }] }, async (cluster) => {
      expect(cluster.bootstrapServers).toHaveLength(3);
      expect(new Set(cluster.bootstrapServers).size).toBe(3);
      // The mock picks each partition's leader at random; pin them so every broker leads two.
      for (let p = 0; p < 6; p++) await cluster.command(`leader ${topic} ${p} ${(p % 3) + 1}`);

      const admin = new Kafka({ brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const described = await admin.describeCluster();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.disconnect();
      expect(described.brokers.map((b) => b.nodeId).sort()).toEqual([1, 2, 3]);
      const leaders = [...(metadata.topics[0]?.partitions ?? [])].sort((a, b) => a.partitionId - b.partitionId).map((p) => p.leader);
      expect(leaders).toEqual([1, 2, 3, 1, 2, 3]);

      const seen = await roundTrip(cluster.bootstrapServers, topic, 60);
      expect(seen).toHaveLength(60);
      expect(new Set(seen.map((r) => r.partition)).size).toBe(6);
    });
  });

  it('answers commands with OK, and rejects bad ones with the error text', async () => {
    await withCluster({ brokers: 3 }, async (cluster) => {
      await expect(cluster.command('down 1')).resolves.toBeUndefined();
      await expect(cluster.command('up 1')).resolves.toBeUndefined();
      await expect(cluster.command('rtt 2 5')).resolves.toBeUndefined();
      await expect(cluster.command('rtt 2 0')).resolves.toBeUndefined();
      await expect(cluster.command('error Produce 6 NOT_LEADER_FOR_PARTITION')).resolves.toBeUndefined();
      await expect(cluster.command('error 12 27')).resolves.toBeUndefined();
      await expect(cluster.command('topic-error some-topic 3')).resolves.toBeUndefined();
      await expect(cluster.command('leader some-topic 0 2')).resolves.toBeUndefined();
      await expect(cluster.command('coordinator group some-group 3')).resolves.toBeUndefined();

      await expect(cluster.command('make it rain')).rejects.toThrow('make it rain: unknown command: make');
      await expect(cluster.command('down 99')).rejects.toThrow(/down 99: .*not available/);
      await expect(cluster.command('error Nope 7')).rejects.toThrow(/usage: error/);
      await expect(cluster.command('down 1\nup 1')).rejects.toThrow(/single command line/);
      await expect(cluster.command('  ')).rejects.toThrow(/single command line/);
      // A failed command does not disturb the ones after it, even when sent together.
      const burst = await Promise.allSettled([cluster.command('bogus'), cluster.command('up 1'), cluster.command('down x')]);
      expect(burst.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    });
  });

  it('creates topics at run time and refuses duplicates and bad names', async () => {
    await withCluster({}, async (cluster) => {
      const topic = unique('later');
      await cluster.createTopic(topic, 2);
      await expect(cluster.createTopic(topic, 2)).rejects.toThrow(/already exists/);
      await expect(cluster.createTopic('has space', 1)).rejects.toThrow(/invalid topic name/);
      await expect(cluster.createTopic('fine', 0)).rejects.toThrow(/positive integer/);
      // Offsets prove the records landed in both partitions, without a 3 s group join.
      const kafka = new Kafka({ brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      await producer.send({ topic, messages: [0, 1, 1].map((partition) => ({ partition, value: 'x' })) });
      await producer.disconnect();
      const admin = kafka.admin();
      await admin.connect();
      const offsets = await admin.fetchTopicOffsets(topic);
      await admin.disconnect();
      expect(offsets.map((o) => [o.partition, o.high]).sort()).toEqual([
        [0, '1'],
        [1, '2'],
      ]);
    });
  });

  it('injected request errors reach the client: retried when it retries, fatal when it does not', async () => {
    const topic = unique('errors');
    await withCluster({ topics: [{ name: topic, partitions: 1 }] }, async (cluster) => {
      const kafka = new Kafka({ brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
      const patient = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      const strict = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 0 } });
      await Promise.all([patient.connect(), strict.connect()]);
      try {
        await cluster.command('error Produce NOT_LEADER_FOR_PARTITION');
        await expect(strict.send({ topic, messages: [{ value: 'x' }] })).rejects.toThrow(/not the leader/);
        await cluster.command('error Produce 6 6');
        await expect(patient.send({ topic, messages: [{ value: 'y' }] })).resolves.toHaveLength(1);
      } finally {
        await Promise.all([patient.disconnect(), strict.disconnect()]);
      }
    });
  });

  it('stop() ends the process and closes its ports; it is safe twice, and later commands reject', async () => {
    const cluster = await startMockCluster({ brokers: 2 });
    const [host, port] = (cluster.bootstrapServers[0] ?? '').split(':');
    await Promise.all([cluster.stop(), cluster.stop()]);
    await expect(cluster.exited).resolves.toEqual({ code: 0, signal: null });
    await cluster.stop();
    await expect(cluster.command('up 1')).rejects.toThrow(/not running/);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), host ?? '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve('connected')));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('reports a failed start with the process error output', async () => {
    await expect(startMockCluster({ brokers: 65 })).rejects.toThrow(/exited \(code 2\).*--brokers must be 1\.\.64/);
    await expect(startMockCluster({ brokers: 0 })).rejects.toThrow(/positive integer/);
    await expect(startMockCluster({ topics: [{ name: 'a:b', partitions: 1 }] })).rejects.toThrow(/invalid topic name/);
  });
});
