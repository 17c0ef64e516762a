/**
 * Compressed batches on a real Kafka broker: records that librdkafka (kcat) and Kafka's own Java
 * producer compressed with gzip, snappy, lz4 and zstd are consumed and stored with their payloads
 * intact, read back through the GraphQL API. Each producer and codec writes to a partition of its
 * own, and the broker's log segment is read to
 * prove the batch is stored compressed with that codec (librdkafka sends a batch uncompressed when
 * compressing would not make it smaller, which would make such a test pass without testing anything).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { metric, spawnService, waitReady } from '../support/process.js';
import { produceWithJava, produceWithKcat } from '../support/compressed-producers.js';
import { CODEC_IDS, storedBatches } from '../support/segments.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
const PRODUCERS = { kcat: produceWithKcat, java: produceWithJava } as const;
const CASES = (['kcat', 'java'] as const).flatMap((producer, p) => CODECS.map((codec, c) => ({ producer, codec, partition: p * CODECS.length + c })));
const COUNT = 50;
const topics = uniqueTopics('compressed');
const READ = `query Read($id: ID!) { test(correlationId: $id) { messageCount messages(first: 100) { totalCount nodes { sequence messageId final payload } } } }`;
let dir: string;
let cluster: KafkaCluster;
let svc: TestService;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kafka-codecs-'));
  cluster = await startKafka({
    nodes: 1,
    dir,
    topics: [
      { name: topics.results, partitions: CASES.length },
      { name: topics.requests, partitions: 1 },
    ],
  });
  svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
  });
  await svc.ready();
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await cluster?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A payload with nesting, non-ASCII text and repetition (so that compressing pays). */
function payloadOf(codec: string, sequence: number) {
  return {
    codec,
    sequence,
    text: `résultat ✓ ${codec} `.repeat(20),
    values: Array.from({ length: 20 }, (_, i) => i * sequence),
    nested: { ok: sequence % 2 === 0, none: null },
  };
}

describe('compressed batches on real Kafka', () => {
  it.each(CASES)('$producer, $codec: every record is stored once with its payload intact', async ({ producer, codec, partition }) => {
    const id = `${producer}-${codec}-${Date.now()}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    const records = Array.from({ length: COUNT }, (_, i) => {
      const sequence = i + 1;
      const value = {
        correlationId: id,
        messageId: `${codec}-${sequence}`,
        sequence,
        final: sequence === COUNT,
        status: sequence === COUNT ? 'completed' : 'running',
        payload: payloadOf(codec, sequence),
      };
      return { key: id, value: JSON.stringify(value) };
    });
    await PRODUCERS[producer]({ brokers: cluster.bootstrapServers, topic: topics.results, partition, codec, records });

    // The broker holds them as one batch compressed with this codec.
    const batches = await storedBatches(join(dir, 'node-1', 'data'), topics.results, partition);
    expect(batches.map((b) => ({ codec: b.codec, records: b.records }))).toEqual([{ codec: CODEC_IDS[codec], records: COUNT }]);

    const test = await eventually(
      async () => {
        const read = await postGraphQL(svc.url, READ, { id });
        expect(read.body.errors).toBeUndefined();
        return read.body.data?.test?.messages.totalCount === COUNT && read.body.data.test;
      },
      30_000,
      `the ${producer} ${codec} records to be stored`,
    );
    expect(test.messageCount).toBe(COUNT);
    expect(test.messages.nodes).toEqual(
      Array.from({ length: COUNT }, (_, i) => ({ sequence: i + 1, messageId: `${codec}-${i + 1}`, final: i + 1 === COUNT, payload: payloadOf(codec, i + 1) })),
    );
  });

  it('read them all without a malformed record or a crash, and stays ready', async () => {
    const stats = svc.service.broker.consumer.stats;
    // A chunk is counted once its store answered, which can be after it is readable.
    await eventually(() => stats.stored >= CASES.length * COUNT, 20_000, 'every record counted');
    expect(stats.malformed).toBe(0);
    expect(stats.stored).toBe(CASES.length * COUNT);
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.consumer).toBe('ok');
  });

  it('a service process, started as it is deployed, reads every one of those batches too', async () => {
    // Node's own module loader, not the test runner's: a codec that cannot load there fails here.
    const svcProcess = await spawnService('compressed-reader', {
      KAFKA_BROKERS: cluster.bootstrapServers.join(','),
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: `${topics.group}-process`,
    });
    try {
      await waitReady(svcProcess);
      const stored = await eventually(
        async () => {
          const n = await metric(svcProcess, /^rcs_records_total\{outcome="stored"\} (\d+)$/m);
          return n === CASES.length * COUNT && n;
        },
        30_000,
        'the process to store every record',
      );
      expect(stored).toBe(CASES.length * COUNT);
      expect(svcProcess.output()).not.toMatch(/codec unavailable|cannot read|cannot decompress/);
    } finally {
      svcProcess.kill('SIGTERM');
      await svcProcess.exited;
    }
  }, 90_000);
});
