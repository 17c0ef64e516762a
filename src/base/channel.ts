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

type State = 'open' | 'ending' | 'failed' | 'returned';

/**
 * Creates a {@link Channel}; see the file header. A class behind the factory, against the
 * project's rule of factories: channels are made per pulled follower and per SSE or multipart
 * subscription (its ending), and a closure-built channel held sixteen functions and their
 * context, 2.4 KB of heap each with a pull waiting, where this one (0.4 KB) is one object with its methods on a shared
 * prototype (a test in `test/unit/base/channel-shape.test.ts` bounds it). It is also its own
 * iterator, and has no accessor: V8 makes an object with an own getter in dictionary mode.
 */
export function createChannel<T>(options: ChannelOptions): Channel<T> {
  return new BoundedChannel<T>(options);
}

class BoundedChannel<T> implements Channel<T>, AsyncIterableIterator<T> {
  readonly iterator: AsyncIterableIterator<T> = this;
  private readonly queue: T[] = [];
  private state: State = 'open';
  private failure: unknown = undefined;
  /** The error an ending channel fails with once drained (`end(error)`). */
  private endError: unknown = undefined;
  private waiting: Waiter<T> | undefined = undefined;
  private closeCalled = false;

  constructor(private readonly options: ChannelOptions) {}

  push(value: T): boolean {
    if (this.state !== 'open') return false;
    if (this.queue.length >= this.options.limit) {
      this.fail(this.options.overflow());
      return false;
    }
    this.queue.push(value);
    this.wake();
    return true;
  }

  end(error?: unknown): void {
    if (this.state !== 'open') return;
    this.state = 'ending';
    this.endError = error;
    if (this.queue.length === 0) this.drained();
    this.wake();
  }

  fail(error: unknown): void {
    if (this.state === 'failed' || this.state === 'returned') return;
    this.state = 'failed';
    this.failure = error;
    this.queue.length = 0;
    this.close();
    this.wake();
  }

  size(): number {
    return this.queue.length;
  }

  takeAll(): T[] {
    return this.queue.splice(0);
  }

  isClosed(): boolean {
    return this.state !== 'open';
  }

  next(): Promise<IteratorResult<T>> {
    if (this.state === 'returned') return Promise.resolve(DONE);
    if (this.state === 'failed') return Promise.reject(this.failure);
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.state === 'ending') {
      this.close();
      return Promise.resolve(DONE);
    }
    const pulled = new Promise<IteratorResult<T>>((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
    try {
      this.options.onPull?.();
    } catch (error) {
      this.fail(error);
    }
    return pulled;
  }

  return(): Promise<IteratorResult<T>> {
    if (this.state !== 'failed') this.state = 'returned';
    this.queue.length = 0;
    this.close();
    this.wake();
    return Promise.resolve(DONE);
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private close(): void {
    if (this.closeCalled) return;
    this.closeCalled = true;
    this.options.onClose?.();
  }

  /** Settles a waiting pull with what is there now. */
  private wake(): void {
    const waiter = this.waiting;
    if (waiter === undefined) return;
    this.waiting = undefined;
    if (this.state === 'failed') waiter.reject(this.failure);
    else if (this.queue.length > 0) waiter.resolve(this.take());
    else waiter.resolve(DONE);
  }

  /** The next value waiting; the channel closes with the last one of an ended channel. */
  private take(): IteratorResult<T> {
    const value = this.queue.shift() as T;
    if (this.state === 'ending' && this.queue.length === 0) this.drained();
    return { value, done: false };
  }

  /** An ending channel is empty: it closes, failed with its end's error if it had one. */
  private drained(): void {
    if (this.endError !== undefined) {
      this.state = 'failed';
      this.failure = this.endError;
    }
    this.close();
  }
}
