/** The real-Kafka helper: a node serves, produces and consumes, stops and comes back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offsetsPartition, startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';

let cluster: KafkaCluster;
/** The folder the cluster is asked to make its own temporary folder in. */
let parent: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'kafka-parent-'));
  cluster = await startKafka({ nodes: 1, topics: [{ name: 'helper-topic', partitions: 2 }], parent });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await rm(parent, { recursive: true, force: true });
});

// A Java broker starts, stops and restarts in seconds, and in tens of seconds on a loaded machine.
describe('startKafka', { timeout: 120_000 }, () => {
  it('runs the pinned Kafka version and serves the topics it created', async () => {
    expect(cluster.version).toMatch(/^4\.\d+\.\d+$/);
    expect(cluster.bootstrapServers).toHaveLength(1);
    expect(await cluster.leaderOf('helper-topic', 0)).toBe(1);
    expect(await cluster.leaderOf('helper-topic', 1)).toBe(1);
  });

  it('makes its working folder in the parent it was given', async () => {
    expect(cluster.nodes[0]?.logFile.startsWith(`${parent}/kafka-`)).toBe(true);
    expect(await readdir(parent)).toHaveLength(1);
  });

  it('refuses to create a topic twice', async () => {
    await cluster.createTopic('twice', 1);
    await expect(cluster.createTopic('twice', 1)).rejects.toThrow(/already exists/);
  });

  it('keeps its records across a SIGKILL and a restart of the node', async () => {
    const kafka = new Kafka({ clientId: 'helper-test', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'helper-topic', messages: [{ key: 'k', value: 'before', partition: 0 }] });
    await producer.disconnect();

    await cluster.killNode(1);
    expect(cluster.nodes[0]?.running).toBe(false);
    await cluster.startNode(1);
    expect(cluster.nodes[0]?.running).toBe(true);

    const admin = await cluster.admin();
    const offsets = await admin.fetchTopicOffsets('helper-topic');
    expect(offsets.find((o) => o.partition === 0)?.high).toBe('1');
  });
});

describe('offsetsPartition', () => {
  it("computes Kafka's partition of a group from Java's String.hashCode", () => {
    // Values from Java: "test" 3556498, "result-collection-service" -669873610 (negated, as
    // Kafka's Utils.abs does), "polygenelubricants" Integer.MIN_VALUE (which Utils.abs maps to 0).
    expect(offsetsPartition('test', 50)).toBe(3556498 % 50);
    expect(offsetsPartition('result-collection-service', 50)).toBe(669873610 % 50);
    expect(offsetsPartition('polygenelubricants', 50)).toBe(0);
  });
});
