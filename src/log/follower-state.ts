/**
 * The state of one follower (`follower.ts` says what a follower is): its replay, what it held while
 * it read its snapshot, its place among the test's arrivals, and its two ways out, pulled as an
 * iterator or pushed to a target, with the pause, the catch-up from the store and the hand-over to
 * a group that pushing brings.
 */
import { finishingStatus, isFinished } from '../domain/status.js';
import type { TestMessage, TestMessageEvent } from '../domain/types.js';
import { createChannel } from '../base/channel.js';
import { ServiceError } from '../base/errors.js';
import type { Follower, FollowSnapshot, FollowSource, FollowTarget } from './follower-types.js';
import { testExpired } from './test-expired.js';
import type { FollowOptions } from './result-log.js';

/** Creates the state of a follower of `correlationId`; `replayOf` picks the replay from a snapshot's messages (and refuses a cursor it does not hold). */
export function createFollowerState(
  source: FollowSource,
  correlationId: string,
  options: FollowOptions,
  replayOf: (messages: readonly TestMessage[]) => readonly TestMessage[],
) {
  const { afterSequence, queueLimit } = options;
  const skips = (message: TestMessage) =>
    afterSequence !== undefined && afterSequence !== null && message.sequence !== null && message.sequence <= afterSequence;

  let replay: readonly TestMessage[] = [];
  let replayIndex = 0;
  // Live messages queued before the follower was switched to pushing: handed on first.
  let pending: TestMessage[] = [];
  let held: TestMessageEvent[] | undefined = [];
  // The snapshot's keys and arrivals: a live event among the first `snapshotArrivals` may be one the
  // snapshot had (a shared log's live reads can lag its snapshot, and a failover can reuse places),
  // and only those are looked up; any later one is new.
  let seen: Set<string> | undefined;
  let snapshotArrivals = Infinity;
  /** Arrivals passed (in the snapshot, delivered or skipped): a paused follower catches up after them. */
  let passed = 0;
  /** The message that finishes the test was passed: nothing follows what is queued. */
  let finished = false;
  let closed = false;
  let target: FollowTarget | undefined;
  let paused = false;
  let resuming = false;
  // A resume asked for while catching up: run once that is done (the target asks once per drain).
  let resumeWanted = false;
  // Its live messages are delivered by a group listener (handOff); it listens no more.
  let handedOff = false;
  let unsubscribe: (() => void) | undefined;
  // The test left the store (its TEST_EXPIRED): told at once, or, while events are held (the
  // snapshot or a catch-up being read), once they are handed on; a target pushed to later is told
  // once given what was queued.
  let left: ServiceError | undefined;

  const stopListening = () => {
    unsubscribe?.();
    unsubscribe = undefined;
  };
  const live = createChannel<TestMessage>({
    limit: queueLimit,
    overflow: () =>
      new ServiceError(
        'SUBSCRIBER_TOO_SLOW',
        `More than ${queueLimit} messages waited for this subscriber; the subscription was closed. Resubscribe with after (the cursor of the last message received) to resume.`,
      ),
    onClose: stopListening,
  });
  const listen = async () => {
    unsubscribe = await source.listen(
      correlationId,
      (event) => {
        if (held !== undefined) held.push(event);
        else accept(event);
      },
      {
        gone: (error) => {
          unsubscribe = undefined;
          left = error;
          if (held === undefined) gone(error);
        },
      },
    );
  };
  /**
   * The test left the store (TEST_EXPIRED): nothing more will come. A pulled follower's reader gets
   * what waits, then the error; a pushed one's target is failed with it (a paused one does not
   * listen: its catch-up finds the test gone).
   */
  const gone = (error: ServiceError) => {
    stopListening();
    if (closed || finished || paused) return;
    if (target === undefined) {
      live.end(error);
      return;
    }
    closed = true;
    target.fail(error);
  };
  /** After the finishing message nothing more comes: stop listening at once, end once what is due is out. */
  const finish = () => {
    finished = true;
    stopListening();
    if (target === undefined) live.end();
    else if (!paused && replayIndex >= replay.length && pending.length === 0) {
      closed = true;
      target.end();
    }
  };
  /** Hands one message to the target (part of a catch-up with `behind` to come); pauses when it can take no more. */
  const hand = (message: TestMessage, behind?: number) => {
    if (!(target as FollowTarget).deliver(message, behind)) pause();
  };
  const pause = () => {
    paused = true;
    stopListening();
  };

  /** A live event, once the snapshot is read. */
  function accept(event: TestMessageEvent): void {
    if (closed || finished || paused) return;
    const message = event.message;
    passed = Math.max(passed, event.arrival);
    const inSnapshot = event.arrival <= snapshotArrivals && seen?.has(message.key) === true;
    if (!inSnapshot && !skips(message)) {
      if (target === undefined) {
        if (!live.push(message)) return;
      } else hand(message);
    }
    if (isFinished(event.status)) finish();
  }

  /** Live: pushed, everything held handed on, listening, not paused or finished. */
  const isLive = () =>
    target !== undefined &&
    !closed &&
    !finished &&
    !paused &&
    !resuming &&
    !handedOff &&
    held === undefined &&
    unsubscribe !== undefined &&
    replayIndex >= replay.length &&
    pending.length === 0;

  /** Hands on the replay and what was queued, while the target takes them; tells the target once it is live. */
  function flush(): void {
    while (!paused && !closed) {
      const message = replayIndex < replay.length ? replay[replayIndex++] : pending.shift();
      if (message === undefined) break;
      hand(message);
    }
    if (finished && !closed && !paused && replayIndex >= replay.length && pending.length === 0) finish();
    if (isLive()) target?.live?.();
  }

  /** Catches up from the store after `passed`, then listens again; pauses again if the target fills up. */
  async function catchUp(): Promise<void> {
    held = [];
    await listen();
    const arrived = await source.readFrom(correlationId, passed);
    if (closed) return;
    if (arrived === null) throw left ?? testExpired(correlationId, 'expired');
    for (let i = 0; i < arrived.length; i++) {
      const { message, arrival } = arrived[i] as (typeof arrived)[number];
      if (arrival <= passed) continue;
      passed = arrival;
      if (!skips(message)) hand(message, arrived.length - 1 - i);
      if (finishingStatus(message) !== null) finish();
      if (paused || finished) break;
    }
    const waiting = held ?? [];
    held = undefined;
    if (paused || finished) return;
    for (const event of waiting) if (event.arrival > passed) accept(event);
    if (left !== undefined) return gone(left);
    resuming = false;
    if (isLive()) target?.live?.();
  }

  const handle: Follower = {
    next() {
      if (replayIndex < replay.length) return Promise.resolve({ value: replay[replayIndex++] as TestMessage, done: false });
      return live.iterator.next();
    },
    return() {
      closed = true;
      replay = [];
      pending = [];
      stopListening();
      return live.iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
    },
    throw(error?: unknown) {
      replay = [];
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
      handedOff = true;
      return passed;
    },
    rejoin(at) {
      if (!handedOff || closed) return;
      handedOff = false;
      passed = Math.max(passed, at);
      paused = true;
    },
    push(to) {
      if (target !== undefined) throw new Error('a follower is pushed to one target');
      target = to;
      pending = live.takeAll();
      flush();
      if (left !== undefined) gone(left);
    },
    resume() {
      if (resuming) {
        resumeWanted = true;
        return;
      }
      if (!paused || closed || target === undefined) return;
      paused = false;
      flush();
      if (paused || closed || finished) return;
      resuming = true;
      catchUp()
        .catch((error: unknown) => {
          if (closed) return;
          closed = true;
          stopListening();
          target?.fail(error);
        })
        .finally(() => {
          resuming = false;
          if (!resumeWanted) return;
          resumeWanted = false;
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
      replay = replayOf(snapshot.messages);
    } catch (error) {
      stopListening();
      throw error;
    }
    seen = new Set(snapshot.messages.map((m) => m.key));
    passed = snapshot.arrivals ?? snapshot.messages.length;
    snapshotArrivals = passed;
    if (isFinished(snapshot.status)) finish();
    const waiting = held ?? [];
    held = undefined;
    for (const event of waiting) accept(event);
    if (left !== undefined) gone(left);
  }

  return { handle, open };
}
