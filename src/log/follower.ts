/**
 * The follower behind every implementation's `follow`: a test's stored messages first, then each
 * new one, with no gap and no duplicate between the two. It starts listening before it reads the
 * snapshot, holds live events until the snapshot is read, then drops whatever the snapshot already
 * had (by key). The source's live events must be complete and in order per test; the Redis log's
 * source re-reads after the last message it delivered when its connection comes back
 * (redis-tail.ts), so a reconnect shows here as nothing but a late event.
 *
 * A follower is read in one of two ways:
 *
 * - **pulled**, as an async iterator: its live part is a bounded channel (base/channel.ts) rather
 *   than an async generator (a generator waiting for its next event cannot be ended by `return()`
 *   until one arrives, which would leak a listener for every client that leaves a quiet test), and
 *   a reader more than `queueLimit` messages behind is cut off with SUBSCRIBER_TOO_SLOW;
 * - **pushed** (`push(target)`, the fan-out hub's way): every message is handed to the target
 *   synchronously, live ones in the same call that announces them, with no promise per message.
 *   When the target says it can take no more (its socket is over its mark), the follower pauses:
 *   it holds nothing but its place, the number of the test's arrivals it has passed (it still
 *   listens, only so that a failover that numbers the list anew moves that place). `resume()` then catches up from the store after that place (`readFrom`, in the order of
 *   arrival, the order live messages come in) and goes live again: a slow reader costs the server
 *   no memory however far behind it falls, and misses nothing and gets nothing twice.
 */
import type { TestMessage, TestRecord } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import { createFollowerState } from './follower-state.js';
import { cursorExpired } from './message-slice.js';
import type { FollowOptions } from './result-log.js';
import type { Follower, FollowedTests, FollowSource } from './follower-types.js';
import { createFollowedTests } from './followed-tests.js';

/** True for a follower that can be pushed to (what `follow` answers; a stand-in a test wraps it in may not be). */
export function isFollower(stream: unknown): stream is Follower {
  const candidate = stream as Partial<Follower> | null;
  return typeof candidate?.push === 'function' && typeof candidate.resume === 'function';
}

/**
 * Opens a follower of `correlationId`. Rejects with NOT_FOUND for an unknown test, and with
 * BAD_USER_INPUT for an `afterKey` the test does not hold. It ends after the final message.
 * `tests`: the log's followed tests over `source` (its own when none is given).
 */
export async function openFollower(
  source: FollowSource,
  correlationId: string,
  options: FollowOptions,
  tests: FollowedTests = createFollowedTests(source),
): Promise<Follower> {
  // With a cursor, a test that is not there (or not the caller's, answered alike) is one that was: the cursor is expired.
  const resuming = (options.afterKey !== undefined && options.afterKey !== null) || (options.afterArrival !== undefined && options.afterArrival !== null);
  const notFound = () => (resuming ? cursorExpired() : new ServiceError('NOT_FOUND', `No test has the correlation id "${correlationId}".`));
  if (options.canSee !== undefined && source.owner !== undefined) {
    const test = await source.owner(correlationId);
    if (test === null || !options.canSee(test as TestRecord)) throw notFound();
  }
  const follower = createFollowerState(source, correlationId, options, (messages) => replayOf(messages, options), tests);
  await follower.open(notFound);
  return follower.handle;
}

/**
 * What the replay delivers of the stored messages: in the order they arrived, which is the order
 * live messages come in too, so "after a message" means the same in the replay and live, whatever
 * the messages' sequences. After a cursor (its place, or its key): every message that arrived
 * later (the live part needs no filter: everything not in the snapshot arrived later still).
 */
function replayOf(messages: readonly TestMessage[], options: FollowOptions): readonly TestMessage[] {
  const { afterSequence, afterKey, afterArrival } = options;
  const arrived = [...messages].sort((a, b) => a.arrival - b.arrival);
  const hasKey = afterKey !== undefined && afterKey !== null;
  const hasPlace = afterArrival !== undefined && afterArrival !== null;
  if (!hasKey && !hasPlace) {
    if (afterSequence !== undefined && afterSequence !== null) return arrived.filter((m) => m.sequence !== null && m.sequence > afterSequence);
    return arrived;
  }
  if (afterSequence !== undefined && afterSequence !== null)
    throw new ServiceError('BAD_USER_INPUT', 'Give after or afterSequence, not both.', { details: { argument: 'after' } });
  const named = hasPlace ? arrived.find((m) => m.arrival === afterArrival) : arrived.find((m) => m.key === afterKey);
  if (named === undefined || (hasKey && named.key !== afterKey)) throw cursorExpired();
  return arrived.filter((m) => m.arrival > named.arrival);
}
