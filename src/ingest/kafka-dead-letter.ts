/**
 * The dead-letter topic: a record that cannot be decoded is copied there, as it was, with where it
 * came from and why it was refused in headers, so it can be inspected and replayed later.
 */
import { Partitioners, type Kafka } from 'kafkajs';
import { disposeOnce, type Disposable } from '../process/disposable.js';
import type { BrokerRecord } from './broker-record.js';
import type { DeadLetterSink } from './consumer.js';

/** Header names on dead-lettered records. */
export const DEAD_LETTER_HEADERS = {
  topic: 'x-origin-topic',
  partition: 'x-origin-partition',
  offset: 'x-origin-offset',
  error: 'x-error',
} as const;

/** A dead-letter sink with its own producer; disposing it disconnects the producer. */
export interface KafkaDeadLetter extends Disposable {
  readonly sink: DeadLetterSink;
}

/** Creates the sink for `topic`. */
export function createKafkaDeadLetter(options: { kafka: Kafka; topic: string }): KafkaDeadLetter {
  const producer = options.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  let connecting: Promise<void> | undefined;
  // Records are handed over concurrently; one send at a time keeps them in their original order.
  let tail: Promise<unknown> = Promise.resolve();
  async function send(record: BrokerRecord, reason: string): Promise<void> {
    connecting ??= producer.connect().catch((error: unknown) => {
      connecting = undefined;
      throw error;
    });
    await connecting;
    // Defined as own properties (not assigned), so a header named `__proto__` is copied like any other.
    const headers = Object.fromEntries(Object.entries(record.headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
    await producer.send({
      topic: options.topic,
      acks: -1,
      messages: [
        {
          key: record.key,
          value: record.value,
          headers: {
            ...headers,
            [DEAD_LETTER_HEADERS.topic]: record.topic,
            [DEAD_LETTER_HEADERS.partition]: String(record.partition),
            [DEAD_LETTER_HEADERS.offset]: record.offset,
            [DEAD_LETTER_HEADERS.error]: reason,
          },
        },
      ],
    });
  }
  return {
    sink(record: BrokerRecord, reason: string) {
      const sent = tail.then(() => send(record, reason));
      tail = sent.catch(() => undefined);
      return sent;
    },
    dispose: disposeOnce(() => producer.disconnect()),
  };
}
