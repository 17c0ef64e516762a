/**
 * The external system of a chaos run: it reads each test request from the requests topic and
 * publishes the test's results as the simulator does (a duplicate of every third step, each fourth
 * pair swapped, a final message last), but it sends each message until the brokers acknowledge it,
 * however long a fault lasts, and records what was acknowledged: the checker's ground truth.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';
import '../src/ingest/kafkajs-queue-timer.js';
import '../src/ingest/kafkajs-stopped-fetch.js';
import { planSequence } from '../tools/simulator/simulator.js';
import type { History } from './history.js';
import { TOPICS } from './stack.js';

/** Steps before the final message, per test. */
export const STEPS = 8;
const INTERVAL_MS = 300;
const RETRY_WAIT_MS = 500;
/** A send not answered in this long is taken as failed and sent again (kafkajs can leave one pending across a broker's death). */
const SEND_TIMEOUT_MS = 30_000;
/** A requests consumer that has not fetched for this long is taken for wedged and replaced. */
const STALLED_AFTER_MS = 90_000;

/** A running external system. */
export interface ExternalSystem {
  /** Resolves once every stream started so far has sent its final message (acknowledged), or after `withinMs`. */
  drained(withinMs: number): Promise<void>;
  /** Streams started and not finished yet. */
  unfinished(): number;
  stop(): Promise<void>;
}

/** Starts reading requests and publishing results. */
export async function startExternalSystem(brokers: readonly string[], history: History): Promise<ExternalSystem> {
  const kafka = new Kafka({ clientId: 'chaos-external', brokers: [...brokers], logLevel: logLevel.NOTHING, retry: { retries: 10 } });
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  let consumer: Consumer | undefined;
  /** When the requests consumer last fetched (the watchdog below). */
  let lastFetch = Date.now();
  let stopped = false;
  const streams = new Set<Promise<void>>();

  /** Sends one result until it is acknowledged (or the run stops). */
  async function sendUntilAcked(correlationId: string, value: string): Promise<boolean> {
    while (!stopped) {
      try {
        const send = producer.send({ topic: TOPICS.results, acks: -1, messages: [{ key: correlationId, value }] });
        send.catch(() => undefined); // a send given up on may still fail later
        await Promise.race([send, sleep(SEND_TIMEOUT_MS).then(() => Promise.reject(new Error('no answer')))]);
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

  /**
   * A consumer that kafkajs gives up on (a long fault) is started again, as many times as it takes:
   * requests wait in the topic. (A start that failed once used to end it for good, and the requests
   * of the run's last minutes were never read.)
   */
  const restartConsumer = async () => {
    while (!stopped) {
      // A wedged consumer's disconnect may never return.
      await Promise.race([consumer?.disconnect().catch(() => undefined), sleep(10_000)]);
      try {
        await startConsumer();
        return;
      } catch {
        await sleep(1_000);
      }
    }
  };
  const startConsumer = async () => {
    const own = kafka.consumer({ groupId: 'chaos-external', maxWaitTimeInMs: 500, retry: { retries: 10 } });
    consumer = own;
    own.on(own.events.CRASH, (event) => {
      if (!event.payload.restart && !stopped && consumer === own) void restartConsumer();
    });
    own.on(own.events.FETCH, () => (lastFetch = Date.now()));
    lastFetch = Date.now();
    await own.connect();
    await own.subscribe({ topic: TOPICS.requests, fromBeginning: true });
    await own.run({
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
  /**
   * kafkajs's consumer can stop fetching without a crash (an hour's run lost its requests consumer
   * this way after the group coordinator was frozen, then killed: 2,026 requests were never read).
   * One that has not fetched for {@link STALLED_AFTER_MS} (a healthy one fetches every half second,
   * a rebalance or a coordinator's failover pauses it for well under a minute) is replaced, and the
   * report counts it.
   */
  let restarting = false;
  const watchdog = setInterval(() => {
    if (stopped || restarting || Date.now() - lastFetch < STALLED_AFTER_MS) return;
    restarting = true;
    history.externalConsumerRestarts += 1;
    void restartConsumer().finally(() => (restarting = false));
  }, 5_000);
  await producer.connect();
  await startConsumer();
  return {
    drained: async (withinMs) => {
      const deadline = Date.now() + withinMs;
      while (streams.size > 0 && Date.now() < deadline) await Promise.race([Promise.all([...streams]), sleep(Math.max(0, deadline - Date.now()))]);
    },
    unfinished: () => streams.size,
    stop: async () => {
      stopped = true;
      clearInterval(watchdog);
      await Promise.all([...streams]);
      await consumer?.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    },
  };
}
