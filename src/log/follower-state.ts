/**
 * The state of one follower (`follower.ts` says what a follower is): its replay, what it held while
 * it read its snapshot, its place among the test's arrivals, and its two ways out, pulled as an
 * iterator or pushed to a target, with the pause, the catch-up from the store and the hand-over to
 * the test's group (followed-tests.ts) that pushing brings.
 */
import { isFinished } from '../domain/status.js';
import type { TestMessage } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';
import type { Follower, FollowedTests, FollowSnapshot, FollowSource, FollowTarget } from './follower-types.js';
import type { FollowOptions } from './result-log.js';
import { FollowerCore } from './follower-core.js';
import { withHadKeys } from './follower-losses.js';

/** Creates the state of a follower of `correlationId`; `replayOf` picks the replay from a snapshot's messages (and refuses a cursor it does not hold). */
export function createFollowerState(
  source: FollowSource,
  correlationId: string,
  options: FollowOptions,
  replayOf: (messages: readonly TestMessage[]) => readonly TestMessage[],
  tests: FollowedTests,
): { readonly handle: Follower; open(notFound: () => ServiceError): Promise<void> } {
  const state = new FollowerState(source, correlationId, options, tests);
  return { handle: state, open: (notFound) => state.open(notFound, replayOf) };
}

/** A follower: its core (follower-core.ts), pulled as an iterator or pushed to a target. */
class FollowerState extends FollowerCore implements Follower {
  next(): Promise<IteratorResult<TestMessage>> {
    if (this.replayIndex < this.replay.length) return Promise.resolve({ value: this.replay[this.replayIndex++] as TestMessage, done: false });
    // Returned or thrown before it needed a live channel: done, rather than a channel made now that nothing would feed.
    if (this.closed && this.channel === undefined) return Promise.resolve({ value: undefined, done: true });
    return this.live.iterator.next();
  }

  return(): Promise<IteratorResult<TestMessage>> {
    this.close();
    return this.channel?.iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<TestMessage>> {
    this.close();
    return this.channel?.iterator.throw?.(error) ?? Promise.reject(error);
  }

  /** Its reader is done with it (returned or thrown): it stops listening and leaves its group. */
  private close(): void {
    this.closed = true;
    this.replay = [];
    this.pending = [];
    this.tests.leave(this);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TestMessage> {
    return this;
  }

  push(to: FollowTarget): void {
    if (this.target !== undefined) throw new Error('a follower is pushed to one target');
    this.target = to;
    this.pending = this.channel?.takeAll() ?? [];
    this.flush();
    if (this.left !== undefined) this.gone(this.left);
  }

  resume(): void {
    if (this.resuming) {
      this.resumeWanted = true;
      return;
    }
    if (!this.paused || this.closed || this.target === undefined) return;
    this.paused = false;
    // Not live until it has caught up: it listens still, and must not join its group before then.
    this.resuming = true;
    this.flush();
    if (this.paused || this.closed || this.finished) {
      this.resuming = false;
      return;
    }
    this.catchUp()
      .catch((error: unknown) => this.ended(error))
      .finally(() => {
        this.resuming = false;
        if (!this.resumeWanted) return;
        this.resumeWanted = false;
        this.resume();
      });
  }

  /**
   * Failovers told while its snapshot was read, which counts the old numbers or the new: it had the
   * lost messages the snapshot holds, and its place comes down to what the list kept (within the
   * snapshot, its keys decide what it has).
   */
  private movedWhileReading(): void {
    const told = this.realignments;
    this.realignments = undefined;
    for (const { kept, lostKeys } of told ?? []) {
      this.had = withHadKeys(
        this.had,
        lostKeys.filter((key) => this.seen?.has(key) === true),
      );
      if (this.passed > kept) this.passed = kept;
    }
  }

  /** Listens, reads the snapshot, and sets the replay; throws NOT_FOUND or BAD_USER_INPUT. */
  async open(notFound: () => ServiceError, replayOf: (messages: readonly TestMessage[]) => readonly TestMessage[]): Promise<void> {
    await this.listenToTest();
    let snapshot: FollowSnapshot | null;
    try {
      snapshot = await this.source.read(this.correlationId);
      if (snapshot === null || (this.options.canSee !== undefined && !this.options.canSee(snapshot))) throw notFound();
      this.replay = replayOf(snapshot.messages);
    } catch (error) {
      this.stopListening();
      throw error;
    }
    // No set for a test with nothing stored yet (most tests a dashboard has just started): nothing to look up.
    this.seen = snapshot.messages.length === 0 ? undefined : new Set(snapshot.messages.map((m) => m.key));
    this.passed = snapshot.arrivals ?? snapshot.messages.length;
    this.snapshotArrivals = this.passed;
    this.movedWhileReading();
    if (isFinished(snapshot.status)) this.finish();
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const event of waiting) this.accept(event);
    if (this.left !== undefined) this.gone(this.left);
  }
}
