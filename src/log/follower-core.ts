/**
 * The moving parts of one follower (follower-state.ts builds the follower from them): its fields,
 * one object that both files read and write, and what the follower does with them as events
 * come: listening, accepting a live event, handing on what it holds, pausing, catching up from
 * the store, finishing, and the test's leaving the store.
 */
import { finishingStatus, isFinished } from '../domain/status.js';
import type { TestMessage, TestMessageEvent } from '../domain/types.js';
import { createChannel, type Channel } from '../base/channel.js';
import { ServiceError } from '../base/errors.js';
import type { FollowSource, FollowTarget } from './follower-types.js';
import { testExpired } from './test-expired.js';
import type { FollowOptions } from './result-log.js';

/** A follower's state: one object, so that the follower (follower-state.ts) and its core read and write the same fields. */
export interface FollowerFields {
  /** The messages of the snapshot to hand on first. */
  replay: readonly TestMessage[];
  /** How many of `replay` were handed on. */
  replayIndex: number;
  /** Live messages queued before the follower was switched to pushing: handed on first. */
  pending: TestMessage[];
  /** Live events that came while the snapshot or a catch-up was read: accepted once it is (undefined: none held now). */
  held: TestMessageEvent[] | undefined;
  /**
   * The snapshot's keys and arrivals: a live event among the first `snapshotArrivals` may be one the
   * snapshot had (a shared log's live reads can lag its snapshot, and a failover can reuse places),
   * and only those are looked up; any later one is new.
   */
  seen: Set<string> | undefined;
  /** How many arrivals the snapshot held (Infinity until it is read). */
  snapshotArrivals: number;
  /** Arrivals passed (in the snapshot, delivered or skipped): a paused follower catches up after them. */
  passed: number;
  /** The message that finishes the test was passed: nothing follows what is queued. */
  finished: boolean;
  /** Ended: returned by its reader, failed, or ended after the finishing message. */
  closed: boolean;
  /** Where a pushed follower hands its messages (undefined: pulled). */
  target: FollowTarget | undefined;
  /** The target took no more: not listening, holding only its place (`passed`). */
  paused: boolean;
  /** Catching up from the store after a pause. */
  resuming: boolean;
  /** A resume asked for while catching up: run once that is done (the target asks once per drain). */
  resumeWanted: boolean;
  /** Its live messages are delivered by a group listener (handOff); it listens no more. */
  handedOff: boolean;
  /** Stops its listening to the test's live events (undefined: not listening). */
  unsubscribe: (() => void) | undefined;
  /**
   * The test left the store (its TEST_EXPIRED): told at once, or, while events are held (the
   * snapshot or a catch-up being read), once they are handed on; a target pushed to later is told
   * once given what was queued.
   */
  left: ServiceError | undefined;
}

/** A follower's state before it opens. */
export function newFollowerFields(): FollowerFields {
  return {
    replay: [],
    replayIndex: 0,
    pending: [],
    held: [],
    seen: undefined,
    snapshotArrivals: Infinity,
    passed: 0,
    finished: false,
    closed: false,
    target: undefined,
    paused: false,
    resuming: false,
    resumeWanted: false,
    handedOff: false,
    unsubscribe: undefined,
    left: undefined,
  };
}

/** What a follower does with its fields. */
export interface FollowerCore {
  /** The live part of a pulled follower: a bounded channel. */
  readonly live: Channel<TestMessage>;
  /** Whether a message is at or below the follower's `afterSequence`. */
  readonly skips: (message: TestMessage) => boolean;
  /** Listens to the test's live events: held while `held` is set, accepted otherwise. */
  readonly listen: () => Promise<void>;
  /** Stops listening; safe to call twice. */
  readonly stopListening: () => void;
  /** The test left the store (TEST_EXPIRED): ends the reader or fails the target. */
  readonly gone: (error: ServiceError) => void;
  /** The finishing message was passed: stop listening, end once what is due is out. */
  readonly finish: () => void;
  /** A live event, once the snapshot is read: queued or handed on, unless the snapshot had it. */
  readonly accept: (event: TestMessageEvent) => void;
  /** Pushed, everything held handed on, listening, not paused, finished or handed off. */
  readonly isLive: () => boolean;
  /** Hands on the replay and what was queued while the target takes them. */
  readonly flush: () => void;
  /** After a pause: reads from the store after `passed`, then listens again. */
  readonly catchUp: () => Promise<void>;
}

/** Creates the core of a follower of `correlationId` over the fields `f`. */
export function createFollowerCore(source: FollowSource, correlationId: string, options: FollowOptions, f: FollowerFields): FollowerCore {
  const { afterSequence, queueLimit } = options;
  const skips = (message: TestMessage) =>
    afterSequence !== undefined && afterSequence !== null && message.sequence !== null && message.sequence <= afterSequence;

  const stopListening = () => {
    f.unsubscribe?.();
    f.unsubscribe = undefined;
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
    f.unsubscribe = await source.listen(
      correlationId,
      (event) => {
        if (f.held !== undefined) f.held.push(event);
        else accept(event);
      },
      {
        gone: (error) => {
          f.unsubscribe = undefined;
          f.left = error;
          if (f.held === undefined) gone(error);
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
    if (f.closed || f.finished || f.paused) return;
    if (f.target === undefined) {
      live.end(error);
      return;
    }
    f.closed = true;
    f.target.fail(error);
  };
  /** After the finishing message nothing more comes: stop listening at once, end once what is due is out. */
  const finish = () => {
    f.finished = true;
    stopListening();
    if (f.target === undefined) live.end();
    else if (!f.paused && f.replayIndex >= f.replay.length && f.pending.length === 0) {
      f.closed = true;
      f.target.end();
    }
  };
  /** Hands one message to the target (part of a catch-up with `behind` to come); pauses when it can take no more. */
  const hand = (message: TestMessage, behind?: number) => {
    if (!(f.target as FollowTarget).deliver(message, behind)) pause();
  };
  const pause = () => {
    f.paused = true;
    stopListening();
  };

  /** A live event, once the snapshot is read. */
  function accept(event: TestMessageEvent): void {
    if (f.closed || f.finished || f.paused) return;
    const message = event.message;
    f.passed = Math.max(f.passed, event.arrival);
    const inSnapshot = event.arrival <= f.snapshotArrivals && f.seen?.has(message.key) === true;
    if (!inSnapshot && !skips(message)) {
      if (f.target === undefined) {
        if (!live.push(message)) return;
      } else hand(message);
    }
    if (isFinished(event.status)) finish();
  }

  /** Live: pushed, everything held handed on, listening, not paused or finished. */
  const isLive = () =>
    f.target !== undefined &&
    !f.closed &&
    !f.finished &&
    !f.paused &&
    !f.resuming &&
    !f.handedOff &&
    f.held === undefined &&
    f.unsubscribe !== undefined &&
    f.replayIndex >= f.replay.length &&
    f.pending.length === 0;

  /** Hands on the replay and what was queued, while the target takes them; tells the target once it is live. */
  function flush(): void {
    while (!f.paused && !f.closed) {
      const message = f.replayIndex < f.replay.length ? f.replay[f.replayIndex++] : f.pending.shift();
      if (message === undefined) break;
      hand(message);
    }
    if (f.finished && !f.closed && !f.paused && f.replayIndex >= f.replay.length && f.pending.length === 0) finish();
    if (isLive()) f.target?.live?.();
  }

  /** Catches up from the store after `passed`, then listens again; pauses again if the target fills up. */
  async function catchUp(): Promise<void> {
    f.held = [];
    await listen();
    const arrived = await source.readFrom(correlationId, f.passed);
    if (f.closed) return;
    if (arrived === null) throw f.left ?? testExpired(correlationId, 'expired');
    for (let i = 0; i < arrived.length; i++) {
      const { message, arrival } = arrived[i] as (typeof arrived)[number];
      if (arrival <= f.passed) continue;
      f.passed = arrival;
      if (!skips(message)) hand(message, arrived.length - 1 - i);
      if (finishingStatus(message) !== null) finish();
      if (f.paused || f.finished) break;
    }
    const waiting = f.held ?? [];
    f.held = undefined;
    if (f.paused || f.finished) return;
    for (const event of waiting) if (event.arrival > f.passed) accept(event);
    if (f.left !== undefined) return gone(f.left);
    f.resuming = false;
    if (isLive()) f.target?.live?.();
  }

  return { live, skips, listen, stopListening, gone, finish, accept, isLive, flush, catchUp };
}
