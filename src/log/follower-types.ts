/**
 * The follower's seam: what a follower reads (its source), where a pushed one hands its messages
 * (its target), and the follower itself. A file of types alone, so that the follower, its state
 * and the sources that feed it import these without importing one another.
 */
import type { TestMessage, TestMessageEvent, TestRecord } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';

/**
 * Called for every event of the followed test, in the order stored. `lost`: true for a message that
 * a Redis failover lost after it was delivered and that was stored again (the failover was told
 * first, `ListenOptions.realigned`); false or absent for every other. Must not throw.
 */
export type EventListener = (event: TestMessageEvent, lost?: boolean) => void;

/** How a listener listens, beside its events. */
export interface ListenOptions {
  /**
   * Told once that the test left the store while listened to (it expired, or was evicted to make
   * room): nothing more will come, and the listener is already removed. Must not throw.
   */
  readonly gone?: (error: ServiceError) => void;
  /** A failover lost writes of the test; told before any event numbered again. Must not throw. */
  readonly realigned?: (realignment: Realignment) => void;
}

/**
 * The most keys one {@link Realignment} names (the Redis tail's recent keys at their fullest), and
 * the most keys of lost messages a follower keeps of what it had been given.
 */
export const MAX_LOST_KEYS = 1250;

/** What a failover that lost writes of a test left of its list. */
export interface Realignment {
  /** The list holds the arrivals it held up to this one, and numbers what comes next from here. */
  readonly kept: number;
  /** The keys of the messages delivered at the arrivals after `lostAfter` that the list lost, in order (as many as the source remembers). */
  readonly lostKeys: readonly string[];
  /** The arrival after which `lostKeys` were delivered: `kept`, unless the source remembers fewer than were lost. */
  readonly lostAfter: number;
}

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
  /** Starts listening; resolves once every event stored from now on will be delivered (and the test's leaving the store told). */
  listen(correlationId: string, listener: EventListener, options?: ListenOptions): Promise<() => void>;
  /** The messages stored after the first `passed` arrivals, in the order they arrived; null when the test is gone. */
  readFrom(correlationId: string, passed: number): Promise<readonly ArrivedMessage[] | null>;
}

/** Where a pushed follower hands its messages. */
export interface FollowTarget {
  /**
   * Takes a message (always); false when it can take no more for now: the follower pauses, and the
   * target calls its `resume()` once it can take more. `behind`: the message is part of a catch-up
   * from the store, with that many still to come.
   */
  deliver(message: TestMessage, behind?: number): boolean;
  /** The test finished: every message up to the one that finished it was delivered. */
  end(): void;
  /** Catching up failed (the store could not be read), or the test left the store (TEST_EXPIRED): nothing more comes. */
  fail(error: unknown): void;
}

/**
 * A target whose live messages may be shared: the live followers of one test whose targets give the
 * same `shareKey` are written by their test's group (followed-tests.ts), each
 * message prepared once for all of them.
 */
export interface SharingTarget<P = unknown> extends FollowTarget {
  /** Equal for targets that make the same of every message (the hub's: one operation and its variables). */
  readonly shareKey: string;
  /**
   * What the targets of the key make of a live message, made once for `reached` of them; a promise
   * when making it reads the store (the group then writes it, in order, once it is made). Must not
   * throw: a promise that rejects fails every target it was for.
   */
  prepare(message: TestMessage, reached: number): P | Promise<P>;
  /** Writes a prepared message; false when full, as `deliver`. */
  take(prepared: P): boolean;
}

/** A follower: pulled as an iterator, or pushed to a target. */
export interface Follower extends AsyncIterableIterator<TestMessage> {
  /** Hands every message from now on to `target` instead of queueing it; call once, before any pull. */
  push(target: FollowTarget): void;
  /** After the target refused more: catches up from the store and goes on. Does nothing unless paused. */
  resume(): void;
  /** The test followed. */
  readonly correlationId: string;
}

/**
 * A follower as its log's followed tests know it (followed-tests.ts): given the test's live events
 * while it listens on its own, and written by its group once it is live and shares. Inside the log only.
 */
export interface TestFollower {
  readonly correlationId: string;
  /** A live event of its test, while it listens on its own. Must not throw. */
  heard(event: TestMessageEvent): void;
  /**
   * A failover lost writes of its test (`ListenOptions.realigned`): it keeps the keys of the lost
   * messages it had been given (up to `place`: its group's place for it, its own otherwise) so that,
   * stored again, they are not given twice, and its own place moves to the list's new end; while
   * it reads its snapshot or catches up, once that read is in. Nothing once it has ended.
   */
  realigned(realignment: Realignment, place?: number): void;
  /** Whether its target took no more and it holds only its place, until it is resumed. */
  isPaused(): boolean;
  /** Whether it was given the message of `key` before a failover lost it ({@link realigned}). */
  hadBefore(key: string): boolean;
  /** Its test left the store while it listened on its own: it listens no more. Must not throw. */
  leftStore(error: ServiceError): void;
  /** Its target (a sharing one: only such followers join a group). */
  readonly sharing: SharingTarget;
  /** The key of the messages it skips (its `afterSequence`): members of one group skip the same ones. */
  readonly skipKey: string;
  /** As a member of a group, the place of the last message the group gave it (kept by the followed tests and their groups alone). */
  groupPlace: number;
  /** Whether a live message is one it does not deliver (at or below its `afterSequence`). */
  skips(message: TestMessage): boolean;
  /**
   * Its group could not write to its target after `passed` arrivals: it is out of the group, and
   * pauses there, to catch up on `resume()`; `finished` when that was the message that finishes the
   * test (it then ends on `resume()`).
   */
  filled(passed: number, finished: boolean): void;
  /**
   * The group is over for it: the test finished (no `error`), left the store, or a message could
   * not be prepared (`error`). It is out of the group already; it ends its target (or fails it) and
   * stops, without waiting for its reader to return it. Does nothing once it has ended.
   */
  ended(error?: unknown): void;
}

/** The followed tests of one log: one listener per test, and the groups its live sharing followers join. */
export interface FollowedTests {
  /**
   * Listens to the follower's test for it (its `heard`); resolves once every event stored from now on
   * will be handed to it. A follower that listens already (paused, or out of its full group) goes on
   * as it was.
   */
  listen(follower: TestFollower): Promise<void>;
  /** It listens no more (finished, gone, returned): out of its group's members, still holding the group. Safe to call twice. */
  unlisten(follower: TestFollower): void;
  /**
   * It is live, listening on its own, with a sharing target, after `passed` arrivals: its group
   * writes its live messages from now on. False, and nothing changes, when it is not listening.
   */
  share(follower: TestFollower, passed: number): boolean;
  /** Its follower ended: out of everything. Safe to call for one that never listened. */
  leave(follower: TestFollower): void;
  /** Followers listening to one test, or to all, on their own or in a group, but not those paused (`ResultLog.followers`). */
  count(correlationId?: string): number;
}
