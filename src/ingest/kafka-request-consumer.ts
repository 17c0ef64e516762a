/**
 * The replicated mode's consumer of the requests topic: one kafkajs consumer in a group of this
 * replica's own, so it is assigned every partition; it reads from the earliest retained record and
 * never commits, so every start rebuilds what the replica knows of each test's start (owner, input,
 * time) along with its results. Each batch's well-formed requests go to the handler in one call;
 * malformed records are logged and skipped (the topic is the service's own: there is no dead
 * letter for it). A consumer that kafkajs gives up on is replaced after a growing pause, like the
 * results consumer.
 */
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import type { Disposable } from '../lifecycle/disposable.js';
import { recordCoordinates } from './broker-record.js';
import { createConsumerStateMachine } from './consumer-state-machine.js';
import { defaultStallLimitMs, silenceError, watchForStall } from './consumer-stall-watch.js';
import { decodeRequest } from './decode-request.js';
import { describeKafkaError } from './describe-kafka-error.js';
import { toBrokerRecord } from './kafka-batch-processor.js';
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
  let current: Consumer | undefined;
  let disposing: Promise<void> | undefined;
  let stallWatch: Disposable | undefined;

  async function eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (!isRunning() || isStale() || disposing !== undefined || batch.messages.length === 0) return;
    const requests: TestRequest[] = [];
    for (const message of batch.messages) {
      const record = toBrokerRecord(message, batch.topic, batch.partition);
      const decoded = decodeRequest(record);
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

  function start(): void {
    if (current !== undefined || disposing !== undefined) return;
    // kafkajs's default rebalance timeout (60 s): this group has no other member to wait for.
    stallWatch ??= watchForStall({
      machine,
      limitMs: options.stallLimitMs ?? defaultStallLimitMs(sessionTimeoutMs, 60_000),
      onStall: (silentMs) => {
        if (current !== undefined) replace(current, silenceError(silentMs), 'silent');
      },
    });
    const c = options.kafka.consumer({
      groupId: options.groupId,
      maxWaitTimeInMs: options.fetchMaxWaitMs ?? 500,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs ?? 1000,
      retry: { retries: 10, restartOnFailure: async () => true },
    });
    current = c;
    // A replaced consumer (it died, or went silent) may still be leaving when its broker answers
    // again: its events must not stand for the new one's.
    const replaced = () => current !== c;
    c.on(c.events.HEARTBEAT, () => replaced() || machine.contact());
    c.on(c.events.FETCH, () => replaced() || machine.fetched());
    c.on(c.events.GROUP_JOIN, () => replaced() || machine.enter('joined'));
    c.on(c.events.REBALANCING, () => replaced() || machine.enter('rebalancing'));
    c.on(c.events.STOP, () => replaced() || machine.enter('stopped'));
    c.on(c.events.CRASH, (e) => {
      if (replaced()) return;
      machine.enter('crashed', describeKafkaError(e.payload.error));
      if (!e.payload.restart) replace(c, e.payload.error);
    });
    machine.enter('connecting');
    // Not awaited: startup completes while the consumer connects and catches up.
    void (async () => {
      await c.connect();
      await c.subscribe({ topic: options.topic, fromBeginning: true });
      await c.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
    })().catch((error: unknown) => replace(c, error));
  }

  /** Drops a consumer that will not recover (it died, or went `silent`) and starts a fresh one after a growing pause. */
  function replace(failed: Consumer, error: unknown, cause: 'died' | 'silent' = 'died'): void {
    if (disposing !== undefined || current !== failed) return;
    current = undefined;
    const { delayMs, reason } = machine.replaced(describeKafkaError(error), cause);
    log.error(
      { err: error, retryInMs: delayMs, reason },
      cause === 'silent' ? 'request consumer went silent; starting a new one' : 'request consumer stopped; starting a new one',
    );
    void failed.disconnect().catch(() => undefined);
    setTimeout(start, delayMs).unref();
  }

  return {
    stats,
    state: () => machine.state(),
    activity: () => machine.activity(),
    start,
    dispose() {
      disposing ??= (async () => {
        await stallWatch?.dispose();
        await current?.disconnect();
        machine.enter('stopped');
      })();
      return disposing;
    },
  };
}
