/**
 * The external system of a chaos run: it reads each test request from the requests topic and
 * publishes the test's results as the simulator does (a duplicate of every third step, each fourth
 * pair swapped, a final message last), but it sends each message until the brokers acknowledge it,
 * however long a fault lasts, and records what was acknowledged: the checker's ground truth.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';
import '../src/ingest/kafkajs-queue-timer.js';
import { planSequence } from '../tools/simulator/simulator.js';
import type { History } from './history.js';
import { TOPICS } from './stack.js';

/** Steps before the final message, per test. */
export const STEPS = 8;
const INTERVAL_MS = 300;
const RETRY_WAIT_MS = 500;

/** A running external system. */
export interface ExternalSystem {
  /** Resolves once every stream started so far has sent its final message (acknowledged). */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts reading requests and publishing results. */
export async function startExternalSystem(brokers: readonly string[], history: History): Promise<ExternalSystem> {
  const kafka = new Kafka({ clientId: 'chaos-external', brokers: [...brokers], logLevel: logLevel.NOTHING, retry: { retries: 10 } });
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  let consumer: Consumer | undefined;
  let stopped = false;
  const streams = new Set<Promise<void>>();

  /** Sends one result until it is acknowledged (or the run stops). */
  async function sendUntilAcked(correlationId: string, value: string): Promise<boolean> {
    while (!stopped) {
      try {
        await producer.send({ topic: TOPICS.results, acks: -1, messages: [{ key: correlationId, value }] });
        return true;
      } catch {
        history.sendRetries += 1;
        await sleep(RETRY_WAIT_MS);
      }
    }
    return false;
  }

  async function stream(correlationId: string): Promise<void> {
    const record = { sequences: new Set<number>(), final: undefined as number | undefined };
    history.acked.set(correlationId, record);
    const sent = new Map<number, string>();
    for (const sequence of planSequence(STEPS, 3, 4)) {
      await sleep(INTERVAL_MS);
      const final = sequence === STEPS + 1;
      const value =
        sent.get(sequence) ??
        JSON.stringify({
          correlationId,
          messageId: `${correlationId}:${sequence}`,
          sequence,
          status: final ? 'completed' : 'running',
          final,
          payload: { step: sequence },
          producedAt: new Date().toISOString(),
        });
      sent.set(sequence, value);
      if (!(await sendUntilAcked(correlationId, value))) return;
      record.sequences.add(sequence);
      if (final) record.final = sequence;
    }
  }

  const startConsumer = async () => {
    consumer = kafka.consumer({ groupId: 'chaos-external', maxWaitTimeInMs: 500, retry: { retries: 10 } });
    // A consumer that kafkajs gives up on (a long fault) is started again: requests wait in the topic.
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart && !stopped) void consumer?.disconnect().finally(() => void startConsumer().catch(() => undefined));
    });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPICS.requests, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const request = JSON.parse(message.value?.toString('utf8') ?? '{}') as { correlationId?: string };
        const id = request.correlationId ?? message.key?.toString('utf8');
        if (id === undefined || history.requestsSeen.has(id)) return;
        history.requestsSeen.add(id);
        const running: Promise<void> = stream(id).finally(() => streams.delete(running));
        streams.add(running);
      },
    });
  };
  await producer.connect();
  await startConsumer();
  return {
    drained: async () => {
      while (streams.size > 0) await Promise.all([...streams]);
    },
    stop: async () => {
      stopped = true;
      await Promise.all([...streams]);
      await consumer?.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    },
  };
}
