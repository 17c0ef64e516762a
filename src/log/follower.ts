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
 *   it stops listening and holds nothing but its place, the number of the test's arrivals it has
 *   passed. `resume()` then catches up from the store after that place (`readFrom`, in the order of
 *   arrival, the order live messages come in) and goes live again: a slow reader costs the server
 *   no memory however far behind it falls, and misses nothing and gets nothing twice.
 */
import { finishingStatus, isFinished } from '../domain/status.js';
import type { TestMessage, TestMessageEvent, TestRecord } from '../domain/types.js';
import { createChannel } from '../base/channel.js';
import { ServiceError } from '../base/errors.js';
import type { FollowOptions } from './result-log.js';

/** Called for every event of the followed test, in the order stored. Must not throw. */
export type EventListener = (event: TestMessageEvent) => void;

/** A test as a follower's snapshot reads it: its record, and how many arrivals that is (unreadable entries included). */
export type FollowSnapshot = TestRecord & { readonly arrivals?: number };

/** A stored message with its place in its test's order of arrival, from 1. */
export interface ArrivedMessage {
  readonly message: TestMessage;
  readonly arrival: number;
}

/** What a follower reads: snapshots of a test, and its live events. */
export interface FollowSource {
  read(correlationId: string): Promise<FollowSnapshot | null>;
  /**
   * The test's owner, when the source can read it without its messages (a shared store): a
   * caller who may not see the test is then refused before any message is read.
   */
  owner?(correlationId: string): Promise<Pick<TestRecord, 'owner'> | null>;
  /**
   * Starts listening; resolves once every event stored from now on will be delivered. `weight`: how
   * many followers the listener counts for (`ResultLog.followers`; one when absent).
   */
  listen(correlationId: string, listener: EventListener, weight?: () => number): Promise<() => void>;
  /** The messages stored after the first `passed` arrivals, in the order they arrived; null when the test is gone. */
  readFrom(correlationId: string, passed: number): Promise<readonly ArrivedMessage[] | null>;
}

/** Where a pushed follower hands its messages. */
export interface FollowTarget {
  /** Takes a message (always); false when it can take no more for now: the follower pauses until `resume()`. */
  deliver(message: TestMessage): boolean;
  /** The test finished: every message up to the one that finished it was delivered. */
  end(): void;
  /** Catching up failed (the store could not be read, or the test is gone): nothing more comes. */
  fail(error: unknown): void;
  /** The follower is live (everything it held handed on, listening): a group may take its live messages over (`handOff`). */
  live?(): void;
}

/** A follower: pulled as an iterator, or pushed to a target. */
export interface Follower extends AsyncIterableIterator<TestMessage> {
  /** Hands every message from now on to `target` instead of queueing it; call once, before any pull. */
  push(target: FollowTarget): void;
  /** After the target refused more: catches up from the store and goes on. Does nothing unless paused. */
  resume(): void;
  /** The test followed. */
  readonly correlationId: string;
  /**
   * When live (pushed, everything it held handed on, listening, not paused): stops listening and
   * answers how many of the test's arrivals it has passed, from where a listener of the test's
   * (the hub's group of subscribers) delivers its live messages instead; undefined, and nothing
   * changes, otherwise.
   */
  handOff(): number | undefined;
  /** After a hand-off, the group's delivery stopped after `passed` arrivals (its target was full): pauses there, to catch up on `resume()`. */
  rejoin(passed: number): void;
  /** Whether a live message is one this follower does not deliver (at or below its `afterSequence`). */
  skips(message: TestMessage): boolean;
  /** Listens to the test's live events, as the follower does (for the group that takes them over, counting as `weight` followers). */
  listen(listener: EventListener, weight: () => number): Promise<() => void>;
}

/** True for a follower that can be pushed to (what `follow` answers; a stand-in a test wraps it in may not be). */
export function isFollower(stream: unknown): stream is Follower {
  const candidate = stream as Partial<Follower> | null;
  return typeof candidate?.push === 'function' && typeof candidate.resume === 'function';
}

/**
 * Opens a follower of `correlationId`. Rejects with NOT_FOUND for an unknown test, and with
 * BAD_USER_INPUT for an `afterKey` the test does not hold. It ends after the final message.
 */
export async function openFollower(source: FollowSource, correlationId: string, options: FollowOptions): Promise<Follower> {
  const notFound = () => new ServiceError('NOT_FOUND', `No test has the correlation id "${correlationId}".`);
  if (options.canSee !== undefined && source.owner !== undefined) {
    const test = await source.owner(correlationId);
    if (test === null || !options.canSee(test as TestRecord)) throw notFound();
  }
  const follower = createFollowerState(source, correlationId, options);
  await follower.open(notFound);
  return follower.handle;
}

/** The follower's state and its two ways out (see the file header). */
function createFollowerState(source: FollowSource, correlationId: string, options: FollowOptions) {
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
    unsubscribe = await source.listen(correlationId, (event) => {
      if (held !== undefined) held.push(event);
      else accept(event);
    });
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
  /** Hands one message to the target; pauses when it can take no more. */
  const hand = (message: TestMessage) => {
    if (!(target as FollowTarget).deliver(message)) pause();
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
    if (arrived === null) throw new ServiceError('NOT_FOUND', `The test "${correlationId}" is no longer stored.`);
    for (const { message, arrival } of arrived) {
      if (arrival <= passed) continue;
      passed = arrival;
      if (!skips(message)) hand(message);
      if (finishingStatus(message) !== null) finish();
      if (paused || finished) break;
    }
    const waiting = held ?? [];
    held = undefined;
    if (paused || finished) return;
    for (const event of waiting) if (event.arrival > passed) accept(event);
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
    listen: (listener, weight) => source.listen(correlationId, listener, weight),
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
      replay = replayOf(snapshot.messages, options);
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
  }

  return { handle, open };
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
  if (named === undefined || (hasKey && named.key !== afterKey))
    throw new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this test', { details: { argument: 'after' } });
  return arrived.filter((m) => m.arrival > named.arrival);
}
