/**
 * Load and observation for fault tests: a producer that sends result records at a steady pace
 * (retrying what the broker refused, as the external system would), a live graphql-ws subscriber
 * per test that timestamps every push, and a sampler of `/readyz`.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { createSseClient, createWsClient, type Subscriber } from './graphql.js';

/** One record produced by the stream. */
export interface Produced {
  readonly id: string;
  readonly sequence: number;
  readonly partition: number;
  /** When it was first handed to the producer. */
  readonly sentAt: number;
  /** When the broker acknowledged it (undefined while not yet). */
  ackedAt?: number;
}

/** The producer side of the stream. */
export interface SteadyStream {
  readonly produced: readonly Produced[];
  /** Stops producing once the send in progress is acknowledged. */
  stop(): Promise<void>;
}

/**
 * Every `tickMs`, one record for each test, test `i` on partition `i % partitions`. A batch the
 * broker refuses is sent again until it is acknowledged (the store keys messages by sequence, so
 * a copy written twice is one message). The producer is idempotent with acks from all in-sync
 * replicas, as a careful external system would run it (`idempotent: false` on the mock broker,
 * which cannot serve it).
 */
export async function startSteadyStream(options: {
  brokers: readonly string[];
  topic: string;
  ids: readonly string[];
  partitions: number;
  tickMs: number;
  idempotent?: boolean;
}): Promise<SteadyStream> {
  const kafka = new Kafka({
    clientId: 'steady-stream',
    brokers: [...options.brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100 },
  });
  const producer: Producer = kafka.producer({ idempotent: options.idempotent ?? true, maxInFlightRequests: 1 });
  await producer.connect();
  const produced: Produced[] = [];
  let running = true;
  let sequence = 0;
  const loop = (async () => {
    while (running) {
      const tick = Date.now();
      sequence += 1;
      const batch = options.ids.map((id, i) => ({ id, sequence, partition: i % options.partitions, sentAt: tick }) as Produced);
      produced.push(...batch);
      // One send per partition: kafkajs 2.2.4 silently drops the part of a send whose partition
      // moved, during its retries, to a broker that had already answered for another partition
      // (sendMessages skips every broker with a response), and still resolves the send.
      for (let partition = 0; partition < options.partitions; partition++) {
        const records = batch.filter((r) => r.partition === partition);
        for (;;) {
          try {
            await producer.send({
              topic: options.topic,
              acks: -1,
              messages: records.map((r) => ({
                key: r.id,
                partition,
                headers: { correlation_id: r.id },
                value: JSON.stringify({ correlationId: r.id, sequence: r.sequence, status: 'running', payload: { sentAt: r.sentAt } }),
              })),
            });
            break;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        }
      }
      const acked = Date.now();
      for (const r of batch) r.ackedAt = acked;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.tickMs - (Date.now() - tick))));
    }
  })();
  return {
    produced,
    async stop() {
      running = false;
      await loop;
      await producer.disconnect();
    },
  };
}

/** What one subscriber received: `${id}/${sequence}` → push times (more than one is a duplicate push). */
export interface Pushes {
  readonly received: Map<string, number[]>;
  /** Errors or completions the subscriptions ended with (none expected). */
  readonly ended: string[];
  dispose(): Promise<void>;
}

/**
 * Subscribes to every test and timestamps each push: over one graphql-ws socket, or over
 * graphql-sse (a stream per subscription). Either way a subscription replays what is stored before
 * it goes live, so none is missed for subscribing late.
 */
export async function subscribeAll(url: string, ids: readonly string[], transport: 'ws' | 'sse' = 'ws'): Promise<Pushes> {
  const client: Subscriber & { dispose(): void | Promise<void> } = transport === 'ws' ? createWsClient(url) : createSseClient(url);
  const received = new Map<string, number[]>();
  const ended: string[] = [];
  for (const id of ids) {
    client.subscribe<{ testMessages: { sequence: number } }>(
      { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id } },
      {
        next: (value) => {
          const key = `${id}/${value.data?.testMessages.sequence}`;
          received.set(key, [...(received.get(key) ?? []), Date.now()]);
        },
        error: (error) => ended.push(`${id}: ${JSON.stringify(error)}`),
        complete: () => ended.push(`${id}: completed`),
      },
    );
  }
  // Over graphql-ws the subscriptions are registered once the socket answered an operation sent after them.
  if (transport === 'ws')
    await new Promise<void>((resolve, reject) => client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve }));
  return { received, ended, dispose: async () => void (await client.dispose()) };
}

/** One answer of `/readyz`. */
export interface ReadinessSample {
  /** When it was asked. */
  readonly at: number;
  /**
   * When it was answered: a check that waits on a store (a command to a hung Redis, up to its
   * timeout) answers for a later moment than the one it was asked at, so a fault is shown by the
   * answers given after it, a request in flight when it began included.
   */
  readonly answeredAt: number;
  readonly status: number;
  readonly checks: Record<string, string>;
}

/** Polls `/readyz` every `everyMs` until stopped. */
export function sampleReadiness(url: string, everyMs: number): { readonly samples: ReadinessSample[]; stop(): Promise<void> } {
  const samples: ReadinessSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      try {
        const response = await fetch(`${url}/readyz`);
        const body = (await response.json()) as { checks: Record<string, string> };
        samples.push({ at, answeredAt: Date.now(), status: response.status, checks: body.checks });
      } catch (error) {
        samples.push({ at, answeredAt: Date.now(), status: 0, checks: { fetch: String(error) } });
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    samples,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
