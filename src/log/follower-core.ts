/**
 * The moving parts of one follower (follower-state.ts builds the follower on them): its fields, and what the follower
 * does with them as events come: listening (through its log's followed tests, followed-tests.ts), accepting a live event,
 * handing on what it holds, joining its test's group once live, pausing, catching up from the store, finishing, the test's leaving the store.
 *
 * A class, against the project's rule of factories: one follower is made per subscription and per followed test, and a
 * follower built of closures held about thirty functions and their contexts beside its fields; as one object with its
 * methods on a shared prototype it holds its fields alone (bench/README.md, "Idle memory").
 */
import { finishingStatus, isFinished } from '../domain/status.js';
import type { TestMessage, TestMessageEvent } from '../domain/types.js';
import { createChannel, type Channel } from '../base/channel.js';
import { ServiceError } from '../base/errors.js';
import type { FollowedTests, FollowSource, FollowTarget, Realignment, SharingTarget, TestFollower } from './follower-types.js';
import { testExpired } from './test-expired.js';
import { withLostHad } from './follower-losses.js';
import type { FollowOptions } from './result-log.js';

/** The fields and moving parts of a follower; follower-state.ts adds its two ways out. */
export class FollowerCore implements TestFollower {
  /** The messages of the snapshot to hand on first. */
  protected replay: readonly TestMessage[] = [];
  /** How many of `replay` were handed on. */
  protected replayIndex = 0;
  /** Live messages queued before the follower was switched to pushing: handed on first. */
  protected pending: TestMessage[] = [];
  /** Live events that came while the snapshot or a catch-up was read: accepted once it is (undefined: none held now). */
  protected held: TestMessageEvent[] | undefined = [];
  /**
   * The snapshot's keys and arrivals: a live event among the first `snapshotArrivals` may be one the
   * snapshot had (a shared log's live reads can lag its snapshot, and a failover can reuse places),
   * and only those are looked up; any later one is new.
   */
  protected seen: Set<string> | undefined = undefined;
  /** How many arrivals the snapshot held (Infinity until it is read). */
  protected snapshotArrivals = Infinity;
  /** Arrivals passed (in the snapshot, delivered or skipped): a paused follower catches up after them. */
  protected passed = 0;
  /** Keys it was given that a Redis failover lost (`realigned`): stored again, not given twice (rare; bounded). */
  protected had: Set<string> | undefined = undefined;
  /** Failovers told while a catch-up read was out, to move by once it is in (undefined: none). */
  protected realignments: Realignment[] | undefined = undefined;
  /** The message that finishes the test was passed: nothing follows what is queued. */
  protected finished = false;
  /** Ended: returned by its reader, failed, or ended after the finishing message. */
  protected closed = false;
  /** Where a pushed follower hands its messages (undefined: pulled). */
  protected target: FollowTarget | undefined = undefined;
  /** The target took no more: holding only its place (`passed`), listening still for a failover's word. */
  protected paused = false;
  /** Catching up from the store after a pause. */
  protected resuming = false;
  /** A resume asked for while catching up: run once that is done (the target asks once per drain). */
  protected resumeWanted = false;
  /** Its live messages are written by its test's group (`share`): it listens on its own no more. */
  protected grouped = false;
  /** Its place in its group (`TestFollower.groupPlace`). */
  groupPlace = 0;
  /**
   * The test left the store (its TEST_EXPIRED): told at once, or once the held events are handed on;
   * a target pushed to later is told once given what was queued.
   */
  protected left: ServiceError | undefined = undefined;
  /**
   * The live part of a pulled follower: a bounded channel, made on first use (`live`). A pushed one
   * makes it only for an event that came before it was pushed: it was a quarter of an idle one's heap.
   */
  protected channel: Channel<TestMessage> | undefined = undefined;

  constructor(
    protected readonly source: FollowSource,
    readonly correlationId: string,
    protected readonly options: FollowOptions,
    /** Where it listens, and joins its test's group once live when its target shares. */
    protected readonly tests: FollowedTests,
  ) {}

  /** The live channel, made on first use. */
  protected get live(): Channel<TestMessage> {
    return (this.channel ??= this.openChannel());
  }

  private openChannel(): Channel<TestMessage> {
    const { queueLimit } = this.options;
    return createChannel<TestMessage>({
      limit: queueLimit,
      overflow: () =>
        new ServiceError(
          'SUBSCRIBER_TOO_SLOW',
          `More than ${queueLimit} messages waited for this subscriber; the subscription was closed. Resubscribe with after (the cursor of the last message received) to resume.`,
        ),
      onClose: () => this.stopListening(),
    });
  }

  /** Its target, as a member of a group (only ever read there: members are followers whose targets share). */
  get sharing(): SharingTarget {
    return this.target as SharingTarget;
  }

  /** Its `afterSequence`, the one option a group's members must share beside their target's key. */
  get skipKey(): string {
    return String(this.options.afterSequence ?? '');
  }

  heard(event: TestMessageEvent): void {
    if (this.held !== undefined) this.held.push(event);
    else this.accept(event);
  }

  leftStore(error: ServiceError): void {
    this.left = error;
    if (this.held === undefined) this.gone(error);
  }

  filled(at: number, finished: boolean): void {
    if (!this.grouped || this.closed) return;
    this.grouped = false;
    // The group's place: its own is the one it joined with (a failover since moved the group's only).
    this.passed = at;
    this.paused = true;
    // Full with the test's last message: nothing is left to catch up; it ends once it can take more.
    if (finished) this.finished = true;
    // Paused, it listens on its own to be told where a failover leaves its place (its catch-up listens again on failure).
    else this.listenToTest().catch(() => undefined);
  }

  realigned(realignment: Realignment, place?: number): void {
    if (this.closed) return;
    // Reading its snapshot or catching up, the read out may count the old numbers or the new: moved once it is in.
    if (this.held !== undefined) (this.realignments ??= []).push(realignment);
    else this.moveFor(realignment, place);
  }

  /** Keeps the lost messages it had; its own place (a group keeps its members') moves to the list's new end. */
  private moveFor(realignment: Realignment, place?: number): void {
    this.had = withLostHad(this.had, realignment, place ?? this.passed);
    if (place === undefined && this.passed > realignment.kept) this.passed = realignment.kept;
    // Past what the list kept, places count the new numbers: its place decides there, not the snapshot's keys.
    if (this.snapshotArrivals > realignment.kept) this.snapshotArrivals = realignment.kept;
  }

  isPaused(): boolean {
    return this.paused;
  }

  hadBefore(key: string): boolean {
    return this.had?.has(key) === true;
  }

  /**
   * Whether it has (or skipped) `message`, stored at `arrival`: a lost one it had, one its snapshot
   * holds within the snapshot (a failover can reuse its places), one at or before its place past it.
   * Its key is read only when there is a set to look it up in (a derived key is built on each read).
   */
  protected gave(message: TestMessage, arrival: number): boolean {
    if (this.had?.has(message.key) === true) return true;
    return arrival <= this.snapshotArrivals ? this.seen?.has(message.key) === true : arrival <= this.passed;
  }

  /** Ends it (or fails it with `error`) once: closed, not listening, its target told. */
  ended(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.grouped = false;
    this.tests.leave(this);
    if (error === undefined) this.target?.end();
    else this.target?.fail(error);
  }

  /** Whether a message is at or below the follower's `afterSequence`. */
  skips(message: TestMessage): boolean {
    const { afterSequence } = this.options;
    return afterSequence !== undefined && afterSequence !== null && message.sequence !== null && message.sequence <= afterSequence;
  }

  /** Stops listening; safe to call twice. */
  protected stopListening(): void {
    this.tests.unlisten(this);
  }

  /** Listens to the test's live events (`heard`): held while `held` is set, accepted otherwise. */
  protected listenToTest(): Promise<void> {
    return this.tests.listen(this);
  }

  /**
   * The test left the store (TEST_EXPIRED): nothing more will come. A pulled follower's reader gets
   * what waits, then the error; a pushed one's target is failed with it (a paused one is failed
   * once it resumes: its catch-up finds the test gone).
   */
  protected gone(error: ServiceError): void {
    this.stopListening();
    if (this.closed || this.finished || this.paused) return;
    if (this.target === undefined) {
      this.live.end(error);
      return;
    }
    this.ended(error);
  }

  /** After the finishing message nothing more comes: stop listening at once, end once what is due is out. */
  protected finish(): void {
    this.finished = true;
    this.stopListening();
    if (this.target === undefined) this.live.end();
    else if (!this.paused && this.replayIndex >= this.replay.length && this.pending.length === 0) {
      this.closed = true;
      this.target.end();
    }
  }

  /** Hands one message to the target (part of a catch-up with `behind` to come); pauses when it can take no more. */
  private hand(message: TestMessage, behind?: number): void {
    // Paused, it holds its place, and listens still: a failover that numbers the list anew moves it.
    if (!(this.target as FollowTarget).deliver(message, behind)) this.paused = true;
  }

  /** A live event, once the snapshot is read: queued or handed on, unless the snapshot had it. */
  protected accept(event: TestMessageEvent): void {
    if (this.closed || this.finished || this.paused) return;
    const { message, arrival } = event;
    // Past its snapshot, a tail can hand it late what its catch-up read gave it already.
    const given = this.gave(message, arrival);
    this.passed = Math.max(this.passed, arrival);
    if (!given && !this.skips(message)) {
      if (this.target === undefined) {
        if (!this.live.push(message)) return;
      } else this.hand(message);
    }
    if (isFinished(event.status)) this.finish();
  }

  /** Pushed, everything held handed on, listening (its test not gone), not paused, finished or in its group. */
  protected isLive(): boolean {
    return (
      this.target !== undefined &&
      !this.closed &&
      !this.finished &&
      !this.paused &&
      !this.resuming &&
      !this.grouped &&
      this.held === undefined &&
      this.left === undefined &&
      this.replayIndex >= this.replay.length &&
      this.pending.length === 0
    );
  }

  /** Hands on the replay and what was queued, while the target takes them; tells the target once it is live. */
  protected flush(): void {
    while (!this.paused && !this.closed) {
      const message = this.replayIndex < this.replay.length ? this.replay[this.replayIndex++] : this.pending.shift();
      if (message === undefined) break;
      this.hand(message);
    }
    if (this.finished && !this.closed && !this.paused && this.replayIndex >= this.replay.length && this.pending.length === 0) this.finish();
    this.joinGroup();
  }

  /** Live, with a target that shares: its test's group takes its live messages over. */
  private joinGroup(): void {
    if (this.isLive() && typeof (this.target as Partial<SharingTarget>).shareKey === 'string' && this.tests.share(this, this.passed)) this.grouped = true;
  }

  /** After a pause: reads from the store after `passed`, then listens again; pauses again if the target fills up. */
  protected async catchUp(): Promise<void> {
    this.held = [];
    await this.listenToTest();
    let arrived = await this.source.readFrom(this.correlationId, this.passed);
    // A failover told meanwhile: the read may count the old numbers. Moved where it says, and read
    // again; what was heard so far is in that read (the new numbers) or counts the old ones.
    while (this.realignments !== undefined && !this.closed) {
      const told = this.realignments;
      this.realignments = undefined;
      for (const realignment of told) this.moveFor(realignment);
      this.held = [];
      arrived = await this.source.readFrom(this.correlationId, this.passed);
    }
    if (this.closed) return;
    if (arrived === null) throw this.left ?? testExpired(this.correlationId, 'expired');
    for (let i = 0; i < arrived.length; i++) {
      const { message, arrival } = arrived[i] as (typeof arrived)[number];
      if (arrival <= this.passed) continue;
      // A message it had before a failover lost it, stored again since (or in its snapshot): not given twice.
      const given = this.gave(message, arrival);
      this.passed = arrival;
      if (!given && !this.skips(message)) this.hand(message, arrived.length - 1 - i);
      if (finishingStatus(message) !== null) this.finish();
      if (this.paused || this.finished) break;
    }
    const waiting = this.held ?? [];
    this.held = undefined;
    if (this.paused || this.finished) return;
    for (const event of waiting) if (event.arrival > this.passed) this.accept(event);
    if (this.left !== undefined) return this.gone(this.left);
    this.resuming = false;
    this.joinGroup();
  }
}
