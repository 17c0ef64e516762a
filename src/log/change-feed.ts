/**
 * The change feed of one process: its subscribers, each with a bounded queue, and the delivery of
 * a change to those that may see the test. Both implementations deliver through it: the memory log
 * emits what it stores, the Redis log what its change channel carries.
 *
 * A hand-written iterator (like follower.ts) so that `return()` ends a subscriber that is waiting
 * on a quiet feed at once, without leaking it.
 */
import type { TestChangeEvent, TestSummary } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import type { ChangeOptions } from './result-log.js';

/** The subscribers of one process. */
export interface ChangeFeed {
  /**
   * Delivers a change, synchronously, to every subscriber that may see its test. With `before`
   * (the test as it stood, when the change may make it visible to more subscribers: its owner was
   * filled in), a subscriber that could already see `before` gets the change as `UPDATED`, one
   * that could not as `CREATED`: for it, the test has just become known.
   */
  emit(change: TestChangeEvent, before?: TestSummary): void;
  /** A new subscriber; it receives every change emitted from now on until it ends. */
  open(options: ChangeOptions): AsyncIterableIterator<TestChangeEvent>;
  /** Subscribers open now. */
  count(): number;
  /** Ends every subscriber. */
  clear(): void;
}

/** Creates a {@link ChangeFeed}; `onLast` runs when its last subscriber ends. */
export function createChangeFeed(onLast?: () => void): ChangeFeed {
  const subscribers = new Set<(change: TestChangeEvent | null, before?: TestSummary) => void>();

  function open(options: ChangeOptions): AsyncIterableIterator<TestChangeEvent> {
    const queue: TestChangeEvent[] = [];
    let closed = false;
    let failure: ServiceError | undefined;
    let waiting: { resolve: (result: IteratorResult<TestChangeEvent>) => void; reject: (error: unknown) => void } | undefined;

    const stop = () => {
      if (subscribers.delete(deliver) && subscribers.size === 0) onLast?.();
    };
    const wake = () => {
      if (waiting === undefined) return;
      const { resolve, reject } = waiting;
      waiting = undefined;
      if (failure !== undefined) reject(failure);
      else if (queue.length > 0) resolve({ value: queue.shift() as TestChangeEvent, done: false });
      else resolve({ value: undefined, done: true });
    };
    // `null` ends the subscriber (the feed is cleared).
    function deliver(change: TestChangeEvent | null, before?: TestSummary): void {
      if (change === null) {
        closed = true;
        stop();
        wake();
        return;
      }
      if (!options.canSee(change.test)) return;
      if (queue.length >= options.queueLimit) {
        failure = new ServiceError('SUBSCRIBER_TOO_SLOW', `More than ${options.queueLimit} changes waited for this subscriber; the subscription was closed. Subscribe again and reread the list.`);
        queue.length = 0;
        stop();
        wake();
        return;
      }
      queue.push(before === undefined ? change : { kind: options.canSee(before) ? 'UPDATED' : 'CREATED', test: change.test });
      wake();
    }
    subscribers.add(deliver);

    const iterator: AsyncIterableIterator<TestChangeEvent> = {
      next() {
        if (failure !== undefined) return Promise.reject(failure);
        if (queue.length > 0) return Promise.resolve({ value: queue.shift() as TestChangeEvent, done: false });
        if (closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          waiting = { resolve, reject };
        });
      },
      return() {
        closed = true;
        queue.length = 0;
        stop();
        wake();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw(error?: unknown) {
        closed = true;
        stop();
        wake();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  return {
    emit(change, before) {
      // Copy first: a subscriber cut off as too slow removes itself while we iterate.
      for (const deliver of [...subscribers]) deliver(change, before);
    },
    open,
    count: () => subscribers.size,
    clear() {
      for (const deliver of [...subscribers]) deliver(null);
    },
  };
}
