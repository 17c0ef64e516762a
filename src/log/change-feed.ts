/**
 * The change feed of one process: its subscribers, each with a bounded queue, and the delivery of
 * a change to those that may see the test. Both implementations deliver through it: the memory log
 * emits what it stores, the Redis log what its change channel carries.
 *
 * Each subscriber is a bounded channel (base/channel.ts): `return()` ends one that is waiting on a
 * quiet feed at once, without leaking it, and one that falls `queueLimit` changes behind is cut off.
 * A watcher (the response cache) is a function told the id of each changed test, synchronously:
 * it needs only which test changed, and an event, a summary and a step of an async iterator per
 * change were about 7 % of what a push allocated with one follower a test (bench/README.md).
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
   * that could not as `CREATED`: for it, the test has just become known. Watchers get its test's id.
   */
  emit(change: TestChangeEvent, before?: TestSummary): void;
  /**
   * Tells the watchers alone that `correlationId` changed: what an implementation calls instead of
   * `emit` when no subscriber is open ({@link ChangeFeed.clients} is 0), so as not to build the
   * change for nobody.
   */
  touched(correlationId: string): void;
  /** A new subscriber; it receives every change emitted from now on until it ends. */
  open(options: ChangeOptions): AsyncIterableIterator<TestChangeEvent>;
  /**
   * A watcher of the service's own (the response cache): the id of every changed test, as it is
   * emitted, with no event, summary or queue per change. The function answered stops it.
   */
  watch(listener: (correlationId: string) => void): () => void;
  /** Subscribers and watchers open now. */
  count(): number;
  /** Subscribers open now (clients'; watchers left out). */
  clients(): number;
  /** Ends every subscriber and stops every watcher. */
  clear(): void;
}

/** Creates a {@link ChangeFeed}; `onLast` runs when its last subscriber ends. */
export function createChangeFeed(onLast?: () => void): ChangeFeed {
  const subscribers = new Set<(change: TestChangeEvent | null, before?: TestSummary) => void>();
  const watchers = new Set<(correlationId: string) => void>();
  const count = () => subscribers.size + watchers.size;

  function open(options: ChangeOptions): AsyncIterableIterator<TestChangeEvent> {
    const stop = () => {
      if (!subscribers.delete(deliver)) return;
      if (count() === 0) onLast?.();
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
    return channel.iterator;
  }

  function watch(listener: (correlationId: string) => void): () => void {
    // Its own function per watch, so that watching twice with one listener is two watchers.
    const watcher = (correlationId: string) => listener(correlationId);
    watchers.add(watcher);
    return () => {
      if (watchers.delete(watcher) && count() === 0) onLast?.();
    };
  }

  const touched = (correlationId: string) => {
    for (const watcher of watchers) watcher(correlationId);
  };

  return {
    emit(change, before) {
      touched(change.test.correlationId);
      // Copy first: a subscriber cut off as too slow removes itself while we iterate.
      if (subscribers.size > 0) for (const deliver of [...subscribers]) deliver(change, before);
    },
    touched,
    open,
    watch,
    count,
    clients: () => subscribers.size,
    clear() {
      watchers.clear();
      for (const deliver of [...subscribers]) deliver(null);
    },
  };
}
