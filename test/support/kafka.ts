/** Test-side broker access: produce result records exactly as the external system would. */
import { Kafka, KafkaJSError, Partitioners, logLevel, type Producer, type TopicPartitionOffsetAndMetadata } from 'kafkajs';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';

/** One record to produce. `value` objects are JSON-encoded; strings and Buffers go as they are. */
export interface TestRecordInput {
  readonly key?: string;
  readonly value: unknown;
  readonly headers?: Record<string, string>;
  readonly partition?: number;
}

/** A connected producer for tests. */
export interface TestProducer {
  send(topic: string, records: readonly TestRecordInput[]): Promise<void>;
  readonly kafka: Kafka;
  disconnect(): Promise<void>;
}

/** Connects a kafkajs producer to the given brokers. */
export async function createTestProducer(brokers: readonly string[]): Promise<TestProducer> {
  const kafka = new Kafka({ clientId: 'test-producer', brokers: [...brokers], logLevel: logLevel.NOTHING });
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  return {
    kafka,
    async send(topic, records) {
      await producer.send({
        topic,
        messages: records.map((r) => ({
          key: r.key ?? null,
          value: typeof r.value === 'string' || Buffer.isBuffer(r.value) ? r.value : JSON.stringify(r.value),
          ...(r.headers ? { headers: r.headers } : {}),
          ...(r.partition === undefined ? {} : { partition: r.partition }),
        })),
      });
    },
    disconnect: () => producer.disconnect(),
  };
}

/** A result record for `correlationId` in the documented format. */
export function result(correlationId: string, fields: Record<string, unknown>): TestRecordInput {
  return { key: correlationId, headers: { correlation_id: correlationId }, value: { correlationId, ...fields } };
}

/** What {@link interceptCommits} does with one commit: let it through, or refuse it. */
export type CommitVerdict = 'send' | 'refuse';

/**
 * A seam for commits on a real broker: every `commitOffsets` call of the consumers `kafka` creates
 * from now on is first shown to `verdict`, which may check what is being committed at that moment;
 * a refused one rejects as a commit the coordinator refused would, without reaching the broker.
 */
export function interceptCommits(kafka: Kafka, verdict: (offsets: readonly TopicPartitionOffsetAndMetadata[]) => CommitVerdict): void {
  const create = kafka.consumer.bind(kafka);
  kafka.consumer = (config) => {
    const consumer = create(config);
    const send = consumer.commitOffsets;
    consumer.commitOffsets = async (offsets) => {
      if (verdict(offsets) === 'refuse') throw new KafkaJSError('The coordinator is not available (refused by the test)', { retriable: false });
      return send(offsets);
    };
    return consumer;
  };
}

/**
 * The outcomes a state that stores each (test, sequence) once would answer for `messages`, kept in
 * `stored`: the stand-in state of the consumer's conformance suites.
 */
export function storeOnce(stored: Map<string, number[]>, messages: readonly IncomingMessage[]): Array<AppendResult['outcome']> {
  return messages.map((m) => {
    const seen = stored.get(m.correlationId) ?? [];
    stored.set(m.correlationId, seen);
    if (seen.includes(m.sequence as number)) return 'duplicate';
    seen.push(m.sequence as number);
    return 'inserted';
  });
}
