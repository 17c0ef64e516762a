/**
 * A bounded channel: values pushed by a producer, pulled by one consumer as an async iterator.
 * The one queue behind every live stream of the service (a follower of a test, a subscriber of
 * the change feed): each had its own hand-written iterator with the same waiting, closed and
 * failure states.
 *
 * Why not an async generator: a generator that waits for its next value cannot be ended by
 * `return()` until a value arrives, which would leak a listener for every client that leaves a
 * quiet stream. Here `return()` ends a waiting pull at once.
 *
 * - `push` past `limit` values waiting fails the channel with `overflow()` (a consumer that does
 *   not keep up is cut off, never buffered without bound).
 * - `end` lets the consumer drain what waits, then ends it (or, given an error, then rejects with it).
 * - `fail` drops what waits; every later pull rejects with the error.
 * - `return()` (the consumer leaves) drops what waits and calls `onClose` once.
 * - `onPull` is told when the consumer waits on an empty open channel: a producer that makes values
 *   on demand (the SSE stream, which reads its source only when the response can take more) makes
 *   one then.
 */

/** The producer's side of a channel, and the consumer's iterator. */
export interface Channel<T> {
  /** Queues a value (or hands it to a waiting pull); false when the channel is closed or failed by this push. */
  push(value: T): boolean;
  /**
   * No more values: the consumer gets those waiting, then the end; with `error`, then that error
   * (a stream that ends for a reason its reader must hear, after everything it was given).
   */
  end(error?: unknown): void;
  /** Ends the channel with `error`: values waiting are dropped, pulls reject. */
  fail(error: unknown): void;
  /** Values waiting. */
  size(): number;
  /**
   * Removes and returns the values waiting, leaving the channel as it was otherwise: for a producer
   * that stops queueing and hands its values on itself (a follower switched to pushing).
   */
  takeAll(): T[];
  /** True once the channel takes no more values (ended, failed or left by its consumer). */
  isClosed(): boolean;
  /** The consumer's side. */
  readonly iterator: AsyncIterableIterator<T>;
}

/** Options of {@link createChannel}. */
export interface ChannelOptions {
  /** Most values that may wait; one more fails the channel. */
  readonly limit: number;
  /** The error a push past `limit` fails the channel with. */
  readonly overflow: () => unknown;
  /** Called once when the channel closes for good (end drained, failure, or `return()`). */
  readonly onClose?: () => void;
  /** Called when a pull finds the open channel empty and starts to wait; if it throws, the channel fails with its error. */
  readonly onPull?: () => void;
}

type Waiter<T> = { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void };

const DONE: IteratorResult<never> = Object.freeze({ value: undefined, done: true });

/**
 * Creates a {@link Channel}; see the file header. The channel is an object literal without
 * accessors: V8 makes a literal that has a getter in dictionary mode, with a property table of its
 * own (about 450 bytes), and two channels are made for every followed test.
 */
export function createChannel<T>(options: ChannelOptions): Channel<T> {
  const queue: T[] = [];
  let state: 'open' | 'ending' | 'failed' | 'returned' = 'open';
  let failure: unknown;
  /** The error an ending channel fails with once drained (`end(error)`). */
  let endError: unknown;
  let waiting: Waiter<T> | undefined;
  let closeCalled = false;

  const close = () => {
    if (closeCalled) return;
    closeCalled = true;
    options.onClose?.();
  };
  /** Settles a waiting pull with what is there now. */
  const wake = () => {
    const waiter = waiting;
    if (waiter === undefined) return;
    waiting = undefined;
    if (state === 'failed') waiter.reject(failure);
    else if (queue.length > 0) waiter.resolve(take());
    else waiter.resolve(DONE);
  };
  /** The next value waiting; the channel closes with the last one of an ended channel. */
  const take = (): IteratorResult<T> => {
    const value = queue.shift() as T;
    if (state === 'ending' && queue.length === 0) drained();
    return { value, done: false };
  };
  /** An ending channel is empty: it closes, failed with its end's error if it had one. */
  const drained = () => {
    if (endError !== undefined) {
      state = 'failed';
      failure = endError;
    }
    close();
  };

  const channel: Channel<T> = {
    push(value) {
      if (state !== 'open') return false;
      if (queue.length >= options.limit) {
        channel.fail(options.overflow());
        return false;
      }
      queue.push(value);
      wake();
      return true;
    },
    end(error) {
      if (state !== 'open') return;
      state = 'ending';
      endError = error;
      if (queue.length === 0) drained();
      wake();
    },
    fail(error) {
      if (state === 'failed' || state === 'returned') return;
      state = 'failed';
      failure = error;
      queue.length = 0;
      close();
      wake();
    },
    size() {
      return queue.length;
    },
    takeAll() {
      return queue.splice(0);
    },
    isClosed() {
      return state !== 'open';
    },
    iterator: {
      next() {
        if (state === 'returned') return Promise.resolve(DONE);
        if (state === 'failed') return Promise.reject(failure);
        if (queue.length > 0) return Promise.resolve(take());
        if (state === 'ending') {
          close();
          return Promise.resolve(DONE);
        }
        const pulled = new Promise<IteratorResult<T>>((resolve, reject) => {
          waiting = { resolve, reject };
        });
        try {
          options.onPull?.();
        } catch (error) {
          channel.fail(error);
        }
        return pulled;
      },
      return() {
        if (state !== 'failed') state = 'returned';
        queue.length = 0;
        close();
        wake();
        return Promise.resolve(DONE);
      },
      throw(error?: unknown) {
        void channel.iterator.return?.();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return channel.iterator;
      },
    },
  };
  return channel;
}
