/**
 * The follower's seam: what a follower reads (its source), where a pushed one hands its messages
 * (its target), and the follower itself. A file of types alone, so that the follower, its state
 * and the sources that feed it import these without importing one another.
 */
import type { TestMessage, TestMessageEvent, TestRecord } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';

/** Called for every event of the followed test, in the order stored. Must not throw. */
export type EventListener = (event: TestMessageEvent) => void;

/** How a listener listens, beside its events. */
export interface ListenOptions {
  /** How many followers the listener counts for (`ResultLog.followers`; one when absent): the one listener of a pass of shared pushes counts its members (shared-pushes.ts). */
  readonly weight?: () => number;
  /**
   * Told once that the test left the store while listened to (it expired, or was evicted to make
   * room): nothing more will come, and the listener is already removed. Must not throw.
   */
  readonly gone?: (error: ServiceError) => void;
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
 * same `shareKey` are written by one listener of the test in one pass (shared-pushes.ts), each
 * message prepared once for all of them.
 */
export interface SharingTarget<P = unknown> extends FollowTarget {
  /** Equal for targets that make the same of every message (the hub's: one operation and its variables). */
  readonly shareKey: string;
  /**
   * What the targets of the key make of a live message, made once for `reached` of them; a promise
   * when making it reads the store (the pass then writes it, in order, once it is made). Must not
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
 * A live pushed follower as the test's shared pushes know it (shared-pushes.ts): it hands them its
 * place when it joins, and takes it back when its target fills up. Inside the log only.
 */
export interface SharedMember {
  readonly correlationId: string;
  /** Its target (a sharing one: members are only ever those). */
  readonly sharing: SharingTarget;
  /** The key of the messages it skips (its `afterSequence`): members of one pass skip the same ones. */
  readonly skipKey: string;
  /** Whether a live message is one it does not deliver (at or below its `afterSequence`). */
  skips(message: TestMessage): boolean;
  /** When live (everything it held handed on, listening, not paused): stops listening and answers how many of the test's arrivals it has passed; undefined, and nothing changes, otherwise. */
  handOff(): number | undefined;
  /**
   * The pass could not write to its target after `passed` arrivals: it pauses there, to catch up on
   * `resume()`; `finished` when that was the message that finishes the test (it then ends on `resume()`).
   */
  rejoin(passed: number, finished: boolean): void;
  /**
   * The pass is over for it: the test finished (no `error`), left the store, or a message could not
   * be prepared (`error`). It is out of the pass already; it ends its target (or fails it) and
   * stops, without waiting for its reader to return it. Does nothing once it has ended.
   */
  ended(error?: unknown): void;
}

/** Where the live pushed followers of one log join the pass of their test and key. */
export interface SharedPushes {
  /** The member is live: its pass takes its live messages over (at once, or once the pass listens). */
  join(member: SharedMember): void;
  /** The member's follower ended: it is no longer written to. Safe to call for one that never joined. */
  leave(member: SharedMember): void;
}
