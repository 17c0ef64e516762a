/**
 * The follower behind every implementation's `follow`: a test's stored messages first, then each
 * new one, with no gap and no duplicate between the two. It starts listening before it reads the
 * snapshot, holds live events until the snapshot is read, then drops whatever the snapshot already
 * had (by key). The source's live events must be complete and in order per test; the Redis log's
 * source re-reads after the last message it delivered when its connection comes back
 * (redis-tail.ts), so a reconnect shows here as nothing but a late event.
 *
 * The live part is a bounded channel (base/channel.ts) rather than an async generator: a generator
 * that is waiting for the next event cannot be ended by `return()` until an event arrives, which
 * would leak a listener for every client that unsubscribes from a quiet test.
 */
import { isFinished } from '../domain/status.js';
import type { TestMessage, TestMessageEvent, TestRecord } from '../domain/types.js';
import { createChannel } from '../base/channel.js';
import { ServiceError } from '../base/errors.js';
import type { FollowOptions } from './result-log.js';

/** Called for every event of the followed test, in the order stored. Must not throw. */
export type EventListener = (event: TestMessageEvent) => void;

/** What a follower reads: snapshots of a test, and its live events. */
export interface FollowSource {
  read(correlationId: string): Promise<TestRecord | null>;
  /**
   * The test's owner, when the source can read it without its messages (a shared store): a
   * caller who may not see the test is then refused before any message is read.
   */
  owner?(correlationId: string): Promise<Pick<TestRecord, 'owner'> | null>;
  /** Starts listening; resolves once every event stored from now on will be delivered. */
  listen(correlationId: string, listener: EventListener): Promise<() => void>;
}

/**
 * Opens a follower of `correlationId`. Rejects with NOT_FOUND for an unknown test, and with
 * BAD_USER_INPUT for an `afterKey` the test does not hold. The iterator
 * ends after the final message, and fails with SUBSCRIBER_TOO_SLOW when more than `queueLimit`
 * live messages wait.
 */
export async function openFollower(source: FollowSource, correlationId: string, options: FollowOptions): Promise<AsyncIterableIterator<TestMessage>> {
  const { afterSequence, queueLimit } = options;
  const hasAfter = afterSequence !== undefined && afterSequence !== null;

  let replay: readonly TestMessage[] = [];
  let replayIndex = 0;
  let held: TestMessageEvent[] | undefined = [];
  let seen: Set<string> | undefined;
  let unsubscribe: (() => void) | undefined;

  const stopListening = () => {
    unsubscribe?.();
    unsubscribe = undefined;
  };
  // The live part: ended after the final message, failed when the client falls too far behind.
  const live = createChannel<TestMessage>({
    limit: queueLimit,
    overflow: () =>
      new ServiceError(
        'SUBSCRIBER_TOO_SLOW',
        `More than ${queueLimit} messages waited for this subscriber; the subscription was closed. Resubscribe with after (the cursor of the last message received) to resume.`,
      ),
    onClose: stopListening,
  });
  /** After the final message (delivered or not) nothing more comes: stop listening at once. */
  const finish = () => {
    stopListening();
    live.end();
  };

  const accept = (event: TestMessageEvent) => {
    if (live.closed) return;
    const message = event.message;
    const skip = seen?.has(message.key) === true || (hasAfter && message.sequence !== null && message.sequence <= afterSequence);
    // A message the client does not need can still be the one that finishes the test.
    if (!skip && !live.push(message)) return;
    if (isFinished(event.status)) finish();
  };

  if (options.canSee !== undefined && source.owner !== undefined) {
    const test = await source.owner(correlationId);
    if (test === null || !options.canSee(test as TestRecord)) throw new ServiceError('NOT_FOUND', `No test has the correlation id "${correlationId}".`);
  }
  unsubscribe = await source.listen(correlationId, (event) => {
    if (held !== undefined) held.push(event);
    else accept(event);
  });

  let snapshot;
  try {
    snapshot = await source.read(correlationId);
  } catch (error) {
    stopListening();
    throw error;
  }
  if (snapshot === null || (options.canSee !== undefined && !options.canSee(snapshot))) {
    stopListening();
    throw new ServiceError('NOT_FOUND', `No test has the correlation id "${correlationId}".`);
  }

  seen = new Set(snapshot.messages.map((m) => m.key));
  try {
    replay = replayOf(snapshot.messages, options);
  } catch (error) {
    stopListening();
    throw error;
  }
  if (isFinished(snapshot.status)) finish();
  const pending = held;
  held = undefined;
  for (const event of pending) accept(event);

  // The stored messages first, then the live channel (which holds what arrived meanwhile).
  const iterator: AsyncIterableIterator<TestMessage> = {
    next() {
      if (replayIndex < replay.length) return Promise.resolve({ value: replay[replayIndex++] as TestMessage, done: false });
      return live.iterator.next();
    },
    return() {
      replay = [];
      return live.iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
    },
    throw(error?: unknown) {
      replay = [];
      return live.iterator.throw?.(error) ?? Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * What the replay delivers of the stored messages. After a key: what follows it in the test's
 * order, whatever its sequence (the live part needs no filter: everything not in the snapshot was
 * stored after the key's message, so a client that saw that message has not seen it).
 */
function replayOf(messages: readonly TestMessage[], options: FollowOptions): readonly TestMessage[] {
  const { afterSequence, afterKey } = options;
  if (afterKey !== undefined && afterKey !== null) {
    if (afterSequence !== undefined && afterSequence !== null)
      throw new ServiceError('BAD_USER_INPUT', 'Give after or afterSequence, not both.', { details: { argument: 'after' } });
    const index = messages.findIndex((m) => m.key === afterKey);
    if (index < 0) throw new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this test', { details: { argument: 'after' } });
    return messages.slice(index + 1);
  }
  if (afterSequence !== undefined && afterSequence !== null) return messages.filter((m) => m.sequence !== null && m.sequence > afterSequence);
  return messages;
}
