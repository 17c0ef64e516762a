/**
 * One SSE subscription's results on their way to the response. graphql-sse pulls results as fast
 * as they come and queues them without bound; here each pull first waits until the response can
 * take more, so a client that stops reading holds at most the response's buffer, and the follower
 * behind the subscription (with its queue limit) is where a slow subscriber is cut off, as over
 * WebSocket. The stream also ends, with one last error result, when the token expires (at the
 * expiry, even while it waits for the response to take more or for a quiet test's next event) or
 * the source fails, so the client always learns why it ended.
 *
 * A hand-written iterator rather than an async generator, for the reason follower.ts gives:
 * `return()` must end a stream that is waiting for a quiet test's next event.
 */
import type { ExecutionResult } from 'graphql';
import { delayUntil } from '../pipeline/stream-endings.js';

/** What {@link guardSseStream} needs besides the source. */
export interface SseStreamOptions {
  /** Resolves once the response can take more (its buffer is under the limit), or has closed. */
  readonly writable: () => Promise<void>;
  /** When the stream must end (the token's expiry), epoch milliseconds. */
  readonly endsAt: number;
  /** The last result when the stream ends at `endsAt`. */
  readonly expired: () => ExecutionResult;
  /** The last result when the source fails (too slow a subscriber, an unavailable store). */
  readonly failed: (error: unknown) => ExecutionResult;
  /** The id of the event the latest result came from, if it has one (a message's cursor). */
  readonly eventId: () => string | undefined;
  /** Called for every result handed on, in order, with its event's id. */
  readonly onResult: (id: string | undefined) => void;
}

type Settle = (result: IteratorResult<ExecutionResult>) => void;

/** Wraps a subscription's results; see the file header. */
export function guardSseStream(source: AsyncIterator<ExecutionResult>, options: SseStreamOptions): AsyncIterableIterator<ExecutionResult> {
  let finished = false;
  let expiredWhileIdle = false;
  let waiting: Settle | undefined;
  // Resolves at the expiry: a pull waiting for the response to take more stops waiting then.
  let expire: () => void = () => undefined;
  const expired = new Promise<void>((resolve) => (expire = resolve));

  const finish = () => {
    finished = true;
    clearTimeout(expiry);
    void source.return?.().catch(() => undefined);
  };
  /** Hands the last result on (to the waiting pull, or returns it), and ends the stream. */
  const last = (result: ExecutionResult): IteratorResult<ExecutionResult> => {
    finish();
    options.onResult(undefined);
    return { value: result, done: false };
  };

  const expiry = setTimeout(() => {
    if (finished) return;
    const settle = waiting;
    waiting = undefined;
    if (settle === undefined) {
      expiredWhileIdle = true;
      expire();
    } else settle(last(options.expired()));
  }, delayUntil(options.endsAt));
  expiry.unref();

  const pull = (settle: Settle) => {
    waiting = settle;
    source.next().then(
      (result) => {
        if (waiting !== settle) return; // ended meanwhile (expiry or return)
        waiting = undefined;
        if (result.done === true) {
          finish();
          settle({ value: undefined, done: true });
          return;
        }
        options.onResult(options.eventId());
        settle({ value: result.value, done: false });
      },
      (error: unknown) => {
        if (waiting !== settle) return;
        waiting = undefined;
        settle(last(options.failed(error)));
      },
    );
  };

  const stream: AsyncIterableIterator<ExecutionResult> & Required<Pick<AsyncIterator<ExecutionResult>, 'return' | 'throw'>> = {
    async next() {
      if (finished) return { value: undefined, done: true };
      if (expiredWhileIdle) return last(options.expired());
      await Promise.race([options.writable(), expired]);
      if (finished) return { value: undefined, done: true };
      // The token expired while the response was full: no further message, the expiry error now.
      if (expiredWhileIdle) return last(options.expired());
      return new Promise<IteratorResult<ExecutionResult>>(pull);
    },
    async return() {
      const settle = waiting;
      waiting = undefined;
      if (!finished) finish();
      settle?.({ value: undefined, done: true });
      return { value: undefined, done: true };
    },
    async throw(error?: unknown) {
      await stream.return();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
