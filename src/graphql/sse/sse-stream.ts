/**
 * How an SSE subscription ends, around the fan-out hub's subscription (whose results do not pass
 * here: the hub writes the pushes to the response itself, `sse-push-sink.ts`). graphql-sse
 * iterates what this returns and sends `complete` when it ends; before that, the client always
 * learns why the stream ends when it is not the test's end:
 *
 * - at the token's expiry (even while the response waits for a client that reads slowly) the
 *   stream ends with one last error result, UNAUTHENTICATED, and leaves the hub;
 * - when the source fails (an unavailable store), with one last result carrying that error.
 *
 * It is a bounded channel (base/channel.ts) of that one last result.
 */
import type { ExecutionResult } from 'graphql';
import { createChannel } from '../../base/channel.js';
import type { HubSubscription } from '../fanout/fanout-hub.js';
import { delayUntil } from '../pipeline/stream-endings.js';

/** What {@link endingSseStream} needs besides the hub's subscription. */
export interface SseEndings {
  /** When the stream must end (the token's expiry), epoch milliseconds. */
  readonly endsAt: number;
  /** The last result when the stream ends at `endsAt`. */
  readonly expired: () => ExecutionResult;
  /** The last result when the source fails. */
  readonly failed: (error: unknown) => ExecutionResult;
}

/** The stream graphql-sse iterates for a subscription the hub pushes; see the file header. */
export function endingSseStream(subscription: Pick<HubSubscription, 'ended' | 'leave'>, endings: SseEndings): AsyncIterableIterator<ExecutionResult> {
  const channel = createChannel<ExecutionResult>({
    limit: 1,
    overflow: () => new Error('an SSE stream ends with one last result'),
    onClose: () => {
      clearTimeout(expiry);
      subscription.leave();
    },
  });
  const last = (result: ExecutionResult) => {
    channel.push(result);
    channel.end();
  };
  const expiry = setTimeout(() => {
    if (!channel.isClosed()) last(endings.expired());
  }, delayUntil(endings.endsAt));
  expiry.unref();
  subscription.ended.then(
    () => channel.end(),
    (error: unknown) => {
      if (!channel.isClosed()) last(endings.failed(error));
    },
  );
  return channel.iterator;
}
