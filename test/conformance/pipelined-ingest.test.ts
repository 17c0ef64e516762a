/**
 * Conformance: the consumer's pipelined batch processing on each broker. The next fetch is taken
 * while a chunk is stored, so these check what that must not change: every record is stored once
 * and in partition order while the state is slow (the lanes fill and fetching waits), a chunk the
 * state fails with an unexpected error is read again from its first record (nothing skipped), and
 * the offsets committed at stop are exactly the ends of what was stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';
import { CHUNK } from '../../src/ingest/kafka-batch-processor.js';
import { createKafkaResultConsumer } from '../../src/ingest/kafka-result-consumer.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, result, storeOnce, type TestProducer } from '../support/kafka.js';
import { uniqueTopics } from '../support/service.js';

const PARTITIONS = 3;
const PER_PARTITION = 1500;

describe.each(TEST_BROKERS)('pipelined ingest on $name', (kind) => {
  const topics = uniqueTopics(`pipeline-${kind.name}`);
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start([{ name: topics.results, partitions: PARTITIONS }]);
    producer = await createTestProducer(broker.bootstrapServers);
    // One test per partition, its sequences in order: the order they are stored in is checkable.
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = Array.from({ length: PER_PARTITION }, (_, i) => ({ ...result(`pipe-${partition}`, { sequence: i + 1, payload: i }), partition }));
      for (let from = 0; from < records.length; from += 500) await producer.send(topics.results, records.slice(from, from + 500));
    }
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
  });

  it('stores every record once and in order through a slow state and a failed chunk, and commits exactly what it stored', { timeout: 120_000 }, async () => {
    const stored = new Map<string, number[]>();
    let calls = 0;
    let failedOnce = false;
    const onEvents = async (messages: readonly IncomingMessage[]): Promise<ReadonlyArray<AppendResult['outcome']>> => {
      calls += 1;
      // Slow enough that the lanes fill and eachBatch has to wait for room.
      await new Promise((resolve) => setTimeout(resolve, 2));
      // One unexpected failure, midway through partition 1's records: nothing of this chunk is stored.
      if (!failedOnce && messages.some((m) => m.correlationId === 'pipe-1' && m.sequence === 700)) {
        failedOnce = true;
        throw new Error('the state failed unexpectedly');
      }
      return storeOnce(stored, messages);
    };
    const kafka = new Kafka({ clientId: 'pipeline-test', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
    const groupId = `${topics.group}-a`;
    const consumer = createKafkaResultConsumer({
      kafka,
      groupId,
      topic: topics.results,
      fromBeginning: true,
      fetchMaxWaitMs: 100,
      ...groupSettings(broker),
      onEvents,
      logger: createSilentLogger(),
    });
    consumer.start();
    try {
      await eventually(() => [...stored.values()].reduce((n, s) => n + s.length, 0) === PARTITIONS * PER_PARTITION, 90_000, 'every record stored');
      // Counted once the store answered, after the stand-in holds them.
      await eventually(() => consumer.stats.stored >= PARTITIONS * PER_PARTITION, 20_000, 'every record counted');
    } finally {
      await consumer.dispose();
    }
    expect(failedOnce).toBe(true);
    expect(calls).toBeGreaterThanOrEqual((PARTITIONS * PER_PARTITION) / CHUNK);
    for (let partition = 0; partition < PARTITIONS; partition++) {
      // In order and gap-free: the failed chunk was read again, not skipped, and nothing overtook it.
      expect(stored.get(`pipe-${partition}`)).toEqual(Array.from({ length: PER_PARTITION }, (_, i) => i + 1));
    }
    expect(consumer.stats.stored).toBe(PARTITIONS * PER_PARTITION);
    const admin = await broker.admin();
    const committed = await admin.fetchOffsets({ groupId, topics: [topics.results] });
    expect(committed[0]?.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual(
      Array.from({ length: PARTITIONS }, (_, p) => [p, String(PER_PARTITION)]),
    );
  });
});

/** The broker's group settings (short sessions on the mock), as the service would take them from its config. */
function groupSettings(broker: TestBroker): { sessionTimeoutMs?: number } {
  const session = broker.groupEnv.KAFKA_SESSION_TIMEOUT_MS;
  return session === undefined ? {} : { sessionTimeoutMs: Number(session) };
}
