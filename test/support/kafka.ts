/** Test-side broker access: produce result records exactly as the external system would. */
import { Kafka, Partitioners, logLevel, type Producer } from 'kafkajs';

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
