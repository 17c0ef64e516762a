/**
 * Conformance: the results consumer's committed offsets on each broker, never past a record that was
 * not stored and never stuck behind one that was. A commit refused once is retried until it goes
 * through, though the partition is quiet (no batch comes to commit again), so a restarted consumer
 * reads nothing a second time; a throw while a batch is handled outside the chunk's store call
 * (here in the decoder, through a dead-letter sink that throws) rewinds the partition to its first
 * record not stored, so every record is stored once in the end and no commit ever passes one that
 * was not.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';
import type { BrokerRecord } from '../../src/ingest/broker-record.js';
import { createKafkaResultConsumer, type KafkaResultConsumerOptions } from '../../src/ingest/kafka-result-consumer.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, interceptCommits, result, storeOnce, type TestProducer } from '../support/kafka.js';
import { uniqueTopics } from '../support/service.js';

const PARTITIONS = 2;

/** A store that keeps each test's sequences in the order they were first stored, and counts every delivery. */
function createStore() {
  const stored = new Map<string, number[]>();
  const delivered: IncomingMessage[] = [];
  const onEvents = async (messages: readonly IncomingMessage[]): Promise<ReadonlyArray<AppendResult['outcome']>> => {
    delivered.push(...messages);
    return storeOnce(stored, messages);
  };
  const count = () => [...stored.values()].reduce((n, s) => n + s.length, 0);
  return { stored, delivered, onEvents, count };
}

describe.each(TEST_BROKERS)('committed offsets on $name', (kind) => {
  const quiet = uniqueTopics(`commit-retry-${kind.name}`);
  const rewind = uniqueTopics(`store-throw-${kind.name}`);
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start([
      { name: quiet.results, partitions: PARTITIONS },
      { name: rewind.results, partitions: PARTITIONS },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
  });

  /** The consumer under test over a kafkajs client of its own, with the broker's group settings. */
  function consumerOptions(kafka: Kafka, groupId: string, topic: string, onEvents: KafkaResultConsumerOptions['onEvents']): KafkaResultConsumerOptions {
    const session = broker.groupEnv.KAFKA_SESSION_TIMEOUT_MS;
    return {
      kafka,
      groupId,
      topic,
      fromBeginning: true,
      fetchMaxWaitMs: 100,
      ...(session === undefined ? {} : { sessionTimeoutMs: Number(session) }),
      onEvents,
      logger: createSilentLogger(),
    };
  }

  async function committed(admin: Admin, groupId: string, topic: string): Promise<string[]> {
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (offsets[0]?.partitions ?? []).sort((a, b) => a.partition - b.partition).map((p) => p.offset);
  }

  it(
    'retries a commit refused once on a quiet partition: its committed offset reaches the end, and a restart reads nothing again',
    { timeout: 120_000 },
    async () => {
      const PER_PARTITION = 300;
      for (let partition = 0; partition < PARTITIONS; partition++) {
        await producer.send(
          quiet.results,
          Array.from({ length: PER_PARTITION }, (_, i) => ({ ...result(`quiet-${partition}`, { sequence: i + 1 }), partition })),
        );
      }
      const kafka = new Kafka({ clientId: 'commit-retry-test', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
      // The first commit that carries a partition's last offset is refused: after it nothing more
      // is stored in that partition, so no later batch would commit it again.
      const refused: string[] = [];
      interceptCommits(kafka, (offsets) => {
        const last = offsets.find((o) => o.offset === String(PER_PARTITION));
        if (refused.length > 0 || last === undefined) return 'send';
        refused.push(`${last.topic}/${last.partition}`);
        return 'refuse';
      });
      const groupId = quiet.group;
      const admin = await broker.admin();
      const first = createStore();
      const consumer = createKafkaResultConsumer({ ...consumerOptions(kafka, groupId, quiet.results, first.onEvents), commitIntervalMs: 200 });
      consumer.start();
      try {
        await eventually(() => first.count() === PARTITIONS * PER_PARTITION, 60_000, 'every record stored');
        await eventually(() => refused.length === 1, 15_000, 'a commit refused');
        // Quiet from here on: only a retry can move the refused partition's committed offset.
        const ends = Array.from({ length: PARTITIONS }, () => String(PER_PARTITION)).join();
        await eventually(
          async () => (await committed(admin, groupId, quiet.results)).join() === ends,
          20_000,
          'the committed offsets at the ends of the partitions',
        );
      } finally {
        await consumer.dispose();
      }

      // A restart of the consumer in the same group starts where the commits say: only new records come.
      const second = createStore();
      const restarted = createKafkaResultConsumer(consumerOptions(kafka, groupId, quiet.results, second.onEvents));
      restarted.start();
      try {
        for (let partition = 0; partition < PARTITIONS; partition++) {
          await producer.send(quiet.results, [{ ...result(`quiet-${partition}`, { sequence: PER_PARTITION + 1 }), partition }]);
        }
        await eventually(() => second.count() === PARTITIONS, 60_000, 'the new records stored');
      } finally {
        await restarted.dispose();
      }
      expect(second.delivered.map((m) => `${m.correlationId}#${m.sequence}`).sort()).toEqual(
        Array.from({ length: PARTITIONS }, (_, p) => `quiet-${p}#${PER_PARTITION + 1}`),
      );
    },
  );

  it(
    'rewinds to the first record not stored when handling a batch throws outside the store call: every record stored once, no commit past one that was not',
    { timeout: 120_000 },
    async () => {
      const PER_PARTITION = 2500;
      // Partition 0's record at this offset is malformed; the first time it is dead-lettered, the
      // sink throws: in the middle of decoding its chunk, which is not the first of the partition.
      const BAD = 1500;
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const records = Array.from({ length: PER_PARTITION }, (_, i) =>
          partition === 0 && i === BAD ? { value: 'not json', partition } : { ...result(`rewind-${partition}`, { sequence: i }), partition },
        );
        for (let from = 0; from < records.length; from += 500) await producer.send(rewind.results, records.slice(from, from + 500));
      }
      const admin = await broker.admin();
      // Record i of a partition is at offset i: what a commit covers can be checked against what was stored.
      expect((await admin.fetchTopicOffsets(rewind.results)).map((p) => [p.partition, p.low, p.high]).sort()).toEqual(
        Array.from({ length: PARTITIONS }, (_, p) => [p, '0', String(PER_PARTITION)]),
      );

      const store = createStore();
      const deadLettered = new Set<string>();
      let thrown = false;
      const deadLetter = (record: BrokerRecord): Promise<void> => {
        if (!thrown) {
          thrown = true;
          throw new Error('the dead-letter sink failed');
        }
        deadLettered.add(`${record.partition}/${record.offset}`);
        return Promise.resolve();
      };
      /** Whether every record of `partition` before `offset` is stored (or, the malformed one, dead-lettered). */
      const settledBefore = (partition: number, offset: number) => {
        const seen = new Set(store.stored.get(`rewind-${partition}`));
        for (let i = 0; i < offset; i++) if (partition === 0 && i === BAD ? !deadLettered.has(`0/${BAD}`) : !seen.has(i)) return false;
        return true;
      };
      const pastUnstored: string[] = [];
      const kafka = new Kafka({ clientId: 'store-throw-test', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
      interceptCommits(kafka, (offsets) => {
        for (const o of offsets) if (!settledBefore(o.partition, Number(o.offset))) pastUnstored.push(`${o.partition}@${o.offset}`);
        return 'send';
      });
      const groupId = rewind.group;
      const consumer = createKafkaResultConsumer({ ...consumerOptions(kafka, groupId, rewind.results, store.onEvents), commitIntervalMs: 0, deadLetter });
      consumer.start();
      try {
        await eventually(() => store.count() === PARTITIONS * PER_PARTITION - 1, 60_000, 'every well-formed record stored');
      } finally {
        await consumer.dispose();
      }
      expect(thrown).toBe(true);
      expect(deadLettered).toEqual(new Set([`0/${BAD}`]));
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const expected = Array.from({ length: PER_PARTITION }, (_, i) => i).filter((i) => partition !== 0 || i !== BAD);
        expect(store.stored.get(`rewind-${partition}`)).toEqual(expected);
      }
      expect(pastUnstored).toEqual([]);
      expect(await committed(admin, groupId, rewind.results)).toEqual(Array.from({ length: PARTITIONS }, () => String(PER_PARTITION)));
    },
  );
});
