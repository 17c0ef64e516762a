/**
 * One SSE subscription's results on their way to the response. graphql-sse pulls results as fast
 * as they come and queues them without bound; here a result is read from the source only when
 * graphql-sse asks for one and the response can take more, so a client that stops reading holds
 * at most the response's buffer, and the follower behind the subscription (with its queue limit)
 * is where a slow subscriber is cut off, as over WebSocket. The stream also ends, with one last
 * error result, when the token expires (at the expiry, even while it waits for the response to take
 * more or for a quiet test's next event) or the source fails, so the client always learns why it
 * ended.
 *
 * The stream is the bounded channel (base/channel.ts), filled on demand (`onPull`): one result at
 * a time, plus the last one.
 */
import type { ExecutionResult } from 'graphql';
import { createChannel } from '../../base/channel.js';
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

/** Wraps a subscription's results; see the file header. */
export function guardSseStream(source: AsyncIterator<ExecutionResult>, options: SseStreamOptions): AsyncIterableIterator<ExecutionResult> {
  let reading = false;
  // Resolves at the expiry: a read waiting for the response to take more stops waiting then.
  let expire: () => void = () => undefined;
  const expired = new Promise<void>((resolve) => (expire = resolve));
  const channel = createChannel<ExecutionResult>({
    // One result read on demand, and the last one: never more.
    limit: 2,
    overflow: () => new Error('the SSE stream read ahead of its consumer'),
    // Anything else that throws while reading (the response's check, the callbacks) fails the stream: its pull rejects.
    onPull: () => void read().catch((error: unknown) => channel.fail(error)),
    onClose: () => {
      clearTimeout(expiry);
      void Promise.resolve(source.return?.()).catch(() => undefined);
    },
  });
  /** Hands the last result on and ends the stream. */
  const last = (result: ExecutionResult) => {
    options.onResult(undefined);
    channel.push(result);
    channel.end();
  };

  const expiry = setTimeout(() => {
    if (channel.closed) return;
    expire();
    last(options.expired());
  }, delayUntil(options.endsAt));
  expiry.unref();

  /** Reads one result from the source for the waiting pull, once the response can take more. */
  const read = async () => {
    if (reading) return;
    reading = true;
    try {
      await Promise.race([options.writable(), expired]);
      if (channel.closed) return;
      let result: IteratorResult<ExecutionResult>;
      try {
        result = await source.next();
      } catch (error) {
        if (!channel.closed) last(options.failed(error));
        return;
      }
      if (channel.closed) return; // ended meanwhile (expiry or return)
      if (result.done === true) channel.end();
      else {
        options.onResult(options.eventId());
        channel.push(result.value);
      }
    } finally {
      reading = false;
    }
  };

  return channel.iterator;
}
