/**
 * The replicated mode's consumer of the requests topic: one kafkajs consumer in a group of this
 * replica's own, so it is assigned every partition; it reads from the earliest retained record and
 * never commits, so every start rebuilds what the replica knows of each test's start (owner, input,
 * time) along with its results. Each batch's well-formed requests go to the handler in one call;
 * malformed records are logged and skipped (the topic is the service's own: there is no dead
 * letter for it). A consumer that kafkajs gives up on, or that goes silent, is replaced after a
 * growing pause, like the results consumer (kafka-consumer-loop.ts).
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import { recordCoordinates } from './broker-record.js';
import { createConsumerStateMachine } from './consumer-state-machine.js';
import { defaultStallLimitMs } from './consumer-stall-watch.js';
import { decodeRequest } from './decode-request.js';
import { toBrokerRecord } from './kafkajs-broker-record.js';
import { createConsumerLoop } from './kafka-consumer-loop.js';
import type { RequestConsumer, RequestConsumerStats, StartRequestHandler } from './request-consumer.js';
import type { TestRequest } from './request-publisher.js';

/** Options of {@link createKafkaRequestConsumer}. */
export interface KafkaRequestConsumerOptions {
  readonly kafka: Kafka;
  /** A group of this replica's own (no other member), so that it reads every partition. */
  readonly groupId: string;
  readonly topic: string;
  readonly fetchMaxWaitMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  /** How long kafkajs may give no sign of life before its consumer is replaced (consumer-stall-watch.ts). */
  readonly stallLimitMs?: number;
  readonly onRequests: StartRequestHandler;
  readonly logger: Logger;
}

/** Creates the requests consumer over an injected kafkajs client. */
export function createKafkaRequestConsumer(options: KafkaRequestConsumerOptions): RequestConsumer {
  const log = options.logger.child({ component: 'request-consumer', topic: options.topic, groupId: options.groupId });
  const stats: RequestConsumerStats = { consumed: 0, malformed: 0 };
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
  const machine = createConsumerStateMachine({ sessionTimeoutMs, fault: () => undefined });

  async function eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (!isRunning() || isStale() || loop.stopping() || batch.messages.length === 0) return;
    const requests: TestRequest[] = [];
    for (const message of batch.messages) {
      const record = toBrokerRecord(message, batch.topic, batch.partition);
      const decoded = record.refused === undefined ? decodeRequest(record) : { ok: false as const, reason: record.refused };
      if (decoded.ok) requests.push(decoded.request);
      else {
        stats.malformed += 1;
        log.warn({ record: recordCoordinates(record), reason: decoded.reason }, 'skipped a record of the requests topic that is not a start request');
      }
    }
    stats.consumed += batch.messages.length;
    await options.onRequests(requests);
    resolveOffset(batch.messages.at(-1)?.offset as string);
    await heartbeat();
  }

  const loop = createConsumerLoop({
    name: 'request consumer',
    machine,
    log,
    // kafkajs's default rebalance timeout (60 s): this group has no other member to wait for.
    stallLimitMs: options.stallLimitMs ?? defaultStallLimitMs(sessionTimeoutMs, 60_000),
    create: () =>
      options.kafka.consumer({
        groupId: options.groupId,
        maxWaitTimeInMs: options.fetchMaxWaitMs ?? 500,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: options.heartbeatIntervalMs ?? 1000,
        retry: { retries: 10, restartOnFailure: async () => true },
      }),
    run: async (c) => {
      await c.connect();
      await c.subscribe({ topic: options.topic, fromBeginning: true });
      await c.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
    },
  });

  return {
    stats,
    state: () => machine.state(),
    activity: () => loop.activity(),
    start: () => loop.start(),
    dispose: () => loop.dispose(),
  };
}
