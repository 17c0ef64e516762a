/**
 * The state of one follower (`follower.ts` says what a follower is): its replay, what it held while
 * it read its snapshot, its place among the test's arrivals, and its two ways out, pulled as an
 * iterator or pushed to a target, with the pause, the catch-up from the store and the hand-over to
 * a group that pushing brings.
 */
import { isFinished } from '../domain/status.js';
import type { TestMessage } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';
import type { Follower, FollowSnapshot, FollowSource } from './follower-types.js';
import type { FollowOptions } from './result-log.js';
import { createFollowerCore, newFollowerFields } from './follower-core.js';

/** Creates the state of a follower of `correlationId`; `replayOf` picks the replay from a snapshot's messages (and refuses a cursor it does not hold). */
export function createFollowerState(
  source: FollowSource,
  correlationId: string,
  options: FollowOptions,
  replayOf: (messages: readonly TestMessage[]) => readonly TestMessage[],
) {
  const f = newFollowerFields();
  const { live, skips, listen, stopListening, gone, accept, finish, isLive, flush, catchUp } = createFollowerCore(source, correlationId, options, f);

  const handle: Follower = {
    next() {
      if (f.replayIndex < f.replay.length) return Promise.resolve({ value: f.replay[f.replayIndex++] as TestMessage, done: false });
      return live.iterator.next();
    },
    return() {
      f.closed = true;
      f.replay = [];
      f.pending = [];
      stopListening();
      return live.iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
    },
    throw(error?: unknown) {
      f.replay = [];
      return live.iterator.throw?.(error) ?? Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return handle;
    },
    correlationId,
    skips,
    listen: (listener, listenOptions) => source.listen(correlationId, listener, listenOptions),
    handOff() {
      if (!isLive()) return undefined;
      stopListening();
      f.handedOff = true;
      return f.passed;
    },
    rejoin(at) {
      if (!f.handedOff || f.closed) return;
      f.handedOff = false;
      f.passed = Math.max(f.passed, at);
      f.paused = true;
    },
    push(to) {
      if (f.target !== undefined) throw new Error('a follower is pushed to one target');
      f.target = to;
      f.pending = live.takeAll();
      flush();
      if (f.left !== undefined) gone(f.left);
    },
    resume() {
      if (f.resuming) {
        f.resumeWanted = true;
        return;
      }
      if (!f.paused || f.closed || f.target === undefined) return;
      f.paused = false;
      flush();
      if (f.paused || f.closed || f.finished) return;
      f.resuming = true;
      catchUp()
        .catch((error: unknown) => {
          if (f.closed) return;
          f.closed = true;
          stopListening();
          f.target?.fail(error);
        })
        .finally(() => {
          f.resuming = false;
          if (!f.resumeWanted) return;
          f.resumeWanted = false;
          handle.resume();
        });
    },
  };

  /** Listens, reads the snapshot, and sets the replay; throws NOT_FOUND or BAD_USER_INPUT. */
  async function open(notFound: () => ServiceError): Promise<void> {
    await listen();
    let snapshot: FollowSnapshot | null;
    try {
      snapshot = await source.read(correlationId);
      if (snapshot === null || (options.canSee !== undefined && !options.canSee(snapshot))) throw notFound();
      f.replay = replayOf(snapshot.messages);
    } catch (error) {
      stopListening();
      throw error;
    }
    f.seen = new Set(snapshot.messages.map((m) => m.key));
    f.passed = snapshot.arrivals ?? snapshot.messages.length;
    f.snapshotArrivals = f.passed;
    if (isFinished(snapshot.status)) finish();
    const waiting = f.held ?? [];
    f.held = undefined;
    for (const event of waiting) accept(event);
    if (f.left !== undefined) gone(f.left);
  }

  return { handle, open };
}
