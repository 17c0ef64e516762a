/**
 * A guard against a broker client that goes quiet for good. kafkajs restarts its consumer after a
 * failure by itself and reports every step (a crash, a rejoin, a heartbeat, a fetch), but it can
 * also stop without a word: the long chaos runs (docs/operations.md) met a kafkajs consumer that
 * neither fetched, heartbeated nor crashed again after its group coordinator was frozen and then
 * killed, and it stayed so. Readiness shows such a consumer as `stalled` or stuck in its last
 * state, but nothing in the process would ever start it again. This watch does: once the client
 * has given no sign of life for the limit, far past anything a live client is silent for (its
 * session timeout, a rebalance, a request timeout), the consumer is replaced as one that died is.
 * A broker outage that long costs nothing more than a new consumer that waits for the brokers.
 */
import { ServiceError } from '../base/errors.js';
import type { Disposable } from '../process/disposable.js';
import type { ConsumerStateMachine } from './consumer-state-machine.js';

/** Options of {@link watchForStall}. */
export interface StallWatchOptions {
  /** The consumer's state machine, whose `silentMs()` counts from its last sign of life. */
  readonly machine: Pick<ConsumerStateMachine, 'silentMs'>;
  /** How long the client may stay silent before it is replaced. */
  readonly limitMs: number;
  /** Replaces the consumer; called once per silence past the limit, as the replacement is a sign of life. */
  readonly onStall: (silentMs: number) => void;
}

/**
 * The default limit: two session timeouts and a rebalance timeout, 120 s with the defaults. A live
 * kafkajs consumer heartbeats every few seconds, times a request out after 30 s and waits at most a
 * rebalance timeout to rejoin, each of which is a sign of life.
 */
export function defaultStallLimitMs(sessionTimeoutMs: number, rebalanceTimeoutMs: number): number {
  return 2 * sessionTimeoutMs + rebalanceTimeoutMs;
}

/** The error a silent consumer is replaced with, for the log and readiness. */
export function silenceError(silentMs: number): ServiceError {
  return new ServiceError(
    'BROKER_UNAVAILABLE',
    `no sign of life from the Kafka client for ${Math.round(silentMs / 1000)} s (no fetch, heartbeat or state change): replaced`,
  );
}

/**
 * Checks the silence every tenth of the limit (at least 100 ms, at most 10 s), on a timer that does
 * not hold the process open, until disposed.
 */
export function watchForStall(options: StallWatchOptions): Disposable {
  const everyMs = Math.min(10_000, Math.max(100, Math.floor(options.limitMs / 10)));
  const timer = setInterval(() => {
    const silent = options.machine.silentMs();
    if (silent > options.limitMs) options.onStall(silent);
  }, everyMs);
  timer.unref();
  return {
    dispose: async () => clearInterval(timer),
  };
}
