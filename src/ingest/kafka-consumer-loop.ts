/**
 * The life of one long-lived kafkajs consumer, shared by the results consumer and the replicated
 * mode's requests consumer: create it, feed its events to the state machine, and replace it when
 * it will not recover. kafkajs restarts a consumer by itself after a retriable failure; after any
 * other its consumer is dead, and it can also go silent for good (no fetch, heartbeat or crash:
 * consumer-stall-watch.ts). Either way a fresh consumer takes its place after a growing pause. A
 * replaced consumer may still be leaving when its broker answers again, so its events are dropped:
 * its `stopped`, rebalance or crash must not stand for the new one's.
 */
import type { Consumer, ConsumerCrashEvent, ConsumerFetchEvent, ConsumerFetchStartEvent, ConsumerGroupJoinEvent } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import type { Disposable } from '../process/disposable.js';
import type { ConsumerStateMachine } from './consumer-state-machine.js';
import type { ConsumerActivity } from './consumer.js';
import { silenceError, watchForStall } from './consumer-stall-watch.js';
import { describeKafkaError } from './describe-kafka-error.js';
// Every consumer runs through this loop: kafkajs's record decoder is replaced before its first
// fetch, its request queues stop polling while nothing is pending, and a connection whose request
// timed out is given up.
import './kafkajs-record-decoder.js';
import './kafkajs-idle-queue.js';
import './kafkajs-timed-out-connection.js';

/** What a consumer adds to the loop's own handling of kafkajs's events; each is called only for the loop's current consumer. */
export interface ConsumerLoopHooks {
  readonly fetchStarted?: (event: ConsumerFetchStartEvent) => void;
  readonly fetched?: (event: ConsumerFetchEvent) => void;
  readonly joined?: (event: ConsumerGroupJoinEvent) => void;
  readonly rebalancing?: (consumer: Consumer) => void;
  /** A crash: logs it as the consumer sees fit, and may answer the reason readiness shows instead of the error's. */
  readonly crashed?: (event: ConsumerCrashEvent) => string | undefined;
}

/** Options of {@link createConsumerLoop}. */
export interface ConsumerLoopOptions {
  /** What the log calls this consumer ("consumer", "request consumer"). */
  readonly name: string;
  readonly machine: ConsumerStateMachine;
  readonly log: Logger;
  /** How long kafkajs may give no sign of life before its consumer is replaced. */
  readonly stallLimitMs: number;
  /** Makes a kafkajs consumer with the caller's settings. */
  readonly create: () => Consumer;
  /** Connects, subscribes and runs a consumer; a rejection replaces it. */
  readonly run: (consumer: Consumer) => Promise<void>;
  readonly hooks?: ConsumerLoopHooks;
}

/** One consumer at a time, replaced when it dies or goes silent, until disposed. */
export interface ConsumerLoop {
  /** Starts a consumer in the background, unless one runs or the loop is stopping. */
  start(): void;
  /** The kafkajs consumer in use; none before the start and while a dead one is replaced. */
  current(): Consumer | undefined;
  /** Whether the loop is stopping. */
  stopping(): boolean;
  /**
   * The state machine's activity, with `gaveUp` when the loop ended with no consumer running and
   * none to come: not even a kafkajs consumer could be made (until a `start()` makes one).
   */
  activity(): ConsumerActivity;
  /**
   * Stops the watch, lets `finish` end the current consumer's work (a last commit), disconnects it,
   * and enters `stopped`. Safe to call twice.
   */
  dispose(finish?: (consumer: Consumer) => Promise<void>): Promise<void>;
}

/** Creates the loop; nothing runs before `start()`. */
export function createConsumerLoop(options: ConsumerLoopOptions): ConsumerLoop {
  const { machine, log, hooks = {} } = options;
  let consumer: Consumer | undefined;
  let disposing: Promise<void> | undefined;
  let gaveUp: string | undefined;
  let stallWatch: Disposable | undefined;

  function start(): void {
    if (consumer !== undefined || disposing !== undefined) return;
    stallWatch ??= watchForStall({
      machine,
      limitMs: options.stallLimitMs,
      onStall: (silentMs) => {
        if (consumer !== undefined) replace(consumer, silenceError(silentMs), 'silent');
      },
    });
    let c: Consumer;
    try {
      c = options.create();
    } catch (error) {
      // No kafkajs consumer could even be made: there is nothing to replace and no event will come
      // to retry, so only a new process can recover. Liveness reports it.
      gaveUp = describeKafkaError(error);
      machine.enter('crashed', gaveUp);
      log.error({ err: error, reason: gaveUp }, `${options.name} could not be created; giving up`);
      return;
    }
    gaveUp = undefined;
    consumer = c;
    listen(c);
    machine.enter('connecting');
    // Not awaited: startup completes while the consumer connects and catches up.
    (async () => options.run(c))().catch((error: unknown) => replace(c, error));
  }

  function listen(c: Consumer): void {
    const current = () => consumer === c;
    c.on(c.events.HEARTBEAT, () => current() && machine.contact());
    c.on(c.events.FETCH_START, (e) => current() && hooks.fetchStarted?.(e));
    c.on(c.events.FETCH, (e) => {
      if (!current()) return;
      machine.fetched();
      hooks.fetched?.(e);
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      if (!current()) return;
      hooks.joined?.(e);
      machine.enter('joined');
    });
    c.on(c.events.REBALANCING, () => {
      if (!current()) return;
      machine.enter('rebalancing');
      hooks.rebalancing?.(c);
    });
    c.on(c.events.CRASH, (e) => {
      if (!current()) return;
      machine.enter('crashed', hooks.crashed?.(e) ?? describeKafkaError(e.payload.error));
      // kafkajs restarts by itself only after retriable errors; after any other its consumer is dead.
      if (!e.payload.restart) replace(c, e.payload.error);
    });
    c.on(c.events.STOP, () => current() && machine.enter('stopped'));
  }

  /** Drops a consumer that will not recover (it died, or went `silent`) and starts a fresh one after a growing pause. */
  function replace(failed: Consumer, error: unknown, cause: 'died' | 'silent' = 'died'): void {
    if (disposing !== undefined || consumer !== failed) return;
    consumer = undefined;
    const { delayMs, reason } = machine.replaced(describeKafkaError(error), cause);
    log.error({ err: error, retryInMs: delayMs, reason }, `${options.name} ${cause === 'silent' ? 'went silent' : 'stopped'}; starting a new one`);
    void failed.disconnect().catch(() => undefined);
    setTimeout(start, delayMs).unref();
  }

  return {
    start,
    current: () => consumer,
    stopping: () => disposing !== undefined,
    activity: () => ({ ...machine.activity(), ...(gaveUp === undefined ? {} : { gaveUp }) }),
    dispose(finish) {
      disposing ??= (async () => {
        await stallWatch?.dispose();
        const c = consumer;
        if (c !== undefined) {
          await finish?.(c);
          await c.disconnect();
        }
        machine.enter('stopped');
      })();
      return disposing;
    },
  };
}
