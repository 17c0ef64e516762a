/**
 * The change feed of one process: its subscribers, each with a bounded queue, and the delivery of
 * a change to those that may see the test. Both implementations deliver through it: the memory log
 * emits what it stores, the Redis log what its change channel carries.
 *
 * Each subscriber is a bounded channel (base/channel.ts): `return()` ends one that is waiting on a
 * quiet feed at once, without leaking it, and one that falls `queueLimit` changes behind is cut off.
 */
import type { TestChangeEvent, TestSummary } from '../domain/types.js';
import { createChannel } from '../base/channel.js';
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
  /** Subscribers open now that are clients' (not `internal`). */
  clients(): number;
  /** Ends every subscriber. */
  clear(): void;
}

/** Creates a {@link ChangeFeed}; `onLast` runs when its last subscriber ends. */
export function createChangeFeed(onLast?: () => void): ChangeFeed {
  const subscribers = new Set<(change: TestChangeEvent | null, before?: TestSummary) => void>();
  let internal = 0;

  function open(options: ChangeOptions): AsyncIterableIterator<TestChangeEvent> {
    const stop = () => {
      if (!subscribers.delete(deliver)) return;
      if (options.internal === true) internal -= 1;
      if (subscribers.size === 0) onLast?.();
    };
    const channel = createChannel<TestChangeEvent>({
      limit: options.queueLimit,
      overflow: () =>
        new ServiceError(
          'SUBSCRIBER_TOO_SLOW',
          `More than ${options.queueLimit} changes waited for this subscriber; the subscription was closed. Subscribe again and reread the list.`,
        ),
      onClose: stop,
    });
    // `null` ends the subscriber (the feed is cleared): it gets what waits, then the end.
    function deliver(change: TestChangeEvent | null, before?: TestSummary): void {
      if (change === null) {
        stop();
        channel.end();
        return;
      }
      if (!options.canSee(change.test)) return;
      channel.push(before === undefined ? change : { kind: options.canSee(before) ? 'UPDATED' : 'CREATED', test: change.test });
    }
    subscribers.add(deliver);
    if (options.internal === true) internal += 1;
    return channel.iterator;
  }

  return {
    emit(change, before) {
      // Copy first: a subscriber cut off as too slow removes itself while we iterate.
      for (const deliver of [...subscribers]) deliver(change, before);
    },
    open,
    count: () => subscribers.size,
    clients: () => subscribers.size - internal,
    clear() {
      for (const deliver of [...subscribers]) deliver(null);
    },
  };
}
