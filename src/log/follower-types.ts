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
  /** How many followers the listener counts for (`ResultLog.followers`; one when absent): a group of subscribers' one listener counts its members. */
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
   * Takes a message (always); false when it can take no more for now: the follower pauses until
   * `resume()`. `behind`: the message is part of a catch-up from the store, with that many still to come.
   */
  deliver(message: TestMessage, behind?: number): boolean;
  /** The test finished: every message up to the one that finished it was delivered. */
  end(): void;
  /** Catching up failed (the store could not be read), or the test left the store (TEST_EXPIRED): nothing more comes. */
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
  /** Listens to the test's live events, as the follower does (for the group that takes them over, counting as `options.weight` followers). */
  listen(listener: EventListener, options: ListenOptions): Promise<() => void>;
}
