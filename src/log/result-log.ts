/**
 * The result-log seam: tests and their messages, stored and announced as one. What `append` takes
 * as new is what `follow` delivers, so storing and announcing cannot drift apart, and
 * replay-then-live is the log's business, not its callers'. Implementations: memory (one process,
 * also each replica of the replicated mode) and Redis (shared by every replica); every
 * implementation passes the contract suite in test/log/.
 */
import type { AppendResult, IncomingMessage, TestChangeEvent, TestListPage, TestMessage, TestRecord, TestStatus, TestSummary } from '../domain/types.js';
import type { Disposable } from '../process/disposable.js';

/**
 * How often a log checks for tests that expired (a tenth of the TTL, between 1 s and 60 s): how
 * late, at most, their followers hear that they are gone (TEST_EXPIRED).
 */
export function expiryCheckInterval(ttlSeconds: number): number {
  return Math.min(60_000, Math.max(1000, (ttlSeconds * 1000) / 10));
}

/** What `create` records for a newly started test. */
export interface NewTest {
  readonly correlationId: string;
  readonly input: unknown;
  /** The subject that started it. */
  readonly owner: string | null;
  /**
   * When it was started, epoch milliseconds; now when absent. A replica that learns of a test from
   * its start request (the replicated mode) passes the request's time, so every replica lists it
   * at the same place.
   */
  readonly createdAt?: number;
}

/** How one follower reads a test. */
export interface FollowOptions {
  /** Skip messages with a sequence at or below this one; the replay also skips unsequenced ones. */
  readonly afterSequence?: number | null;
  /**
   * Resume after the message with this key: the replay is every message that arrived after it (in
   * the order they arrived, as a follower always delivers), then live ones. A key the test does not
   * hold is refused with BAD_USER_INPUT. Not together with `afterSequence`.
   */
  readonly afterKey?: string | null;
  /**
   * Resume after the message at this place in the test's order of arrival (a cursor's): the replay
   * is every message that arrived later. With `afterKey`, the message at that place must be the one
   * with that key (else the cursor is of a test that has since expired and started again: BAD_USER_INPUT).
   */
  readonly afterArrival?: number | null;
  /** Live messages held for a follower that is not reading before it is cut off (SUBSCRIBER_TOO_SLOW). */
  readonly queueLimit: number;
  /** Whether the caller may see this test; one it may not is answered as unknown (NOT_FOUND). */
  readonly canSee?: (test: TestRecord) => boolean;
}

/** Which tests `list` answers, and which page of them. */
export interface ListOptions {
  /** Only the tests this subject started; every test (including those first seen through their results) when absent. */
  readonly owner?: string;
  /** Only tests in one of these statuses; any status when absent. */
  readonly statuses?: readonly TestStatus[] | null;
  /** Largest page (the caller validates the range). */
  readonly first: number;
  /** Cursor of the last test of the previous page; BAD_USER_INPUT when it is not one. */
  readonly after?: string | null;
}

/** Which of a test's messages `messages` reads. */
export interface MessageRange {
  /** Most messages to answer (the caller validates the range). */
  readonly first: number;
  /**
   * Start right after the message with this key, in the test's order; from the first message
   * when absent. A key the test does not hold is refused with BAD_USER_INPUT.
   */
  readonly afterKey?: string | null;
}

/** A page of a test's messages, in the test's order. */
export interface MessageSlice {
  readonly messages: readonly TestMessage[];
  /** Whether messages follow the page. */
  readonly hasNextPage: boolean;
  /** How many messages the test holds in all. */
  readonly totalCount: number;
}

/** How one subscriber reads the change feed. */
export interface ChangeOptions {
  /** Changes held for a subscriber that is not reading before it is cut off (SUBSCRIBER_TOO_SLOW). */
  readonly queueLimit: number;
  /** Whether the subscriber may see the test (by its owner); changes of other tests are not delivered. */
  readonly canSee: (test: Pick<TestSummary, 'owner'>) => boolean;
}

/**
 * Whether changes made anywhere reach this process's change feed now: `live` is false while they
 * may be missed (the Redis subscriber connection is down or not yet subscribed again), and `epoch`
 * moves at every loss and every return, so a reader that keeps what it read until a change of it
 * arrives can tell that changes may have gone by unseen.
 */
export interface ChangeDelivery {
  readonly live: boolean;
  readonly epoch: number;
}

/**
 * The store side of the log: tests and their messages, keyed by correlation id, written and read.
 * Its `append` is also what announces a message to the live side (storing and announcing are one
 * step), so the two sides are one object per store; callers take the side they use.
 */
export interface ResultStore {
  /**
   * Records a new test with no messages, and answers it. A test that was already started (by an
   * earlier create) is kept as it is, whoever creates it again. A test known so far only through
   * its results is filled in: it takes the input, the owner and (when given) the `createdAt` of
   * this call and keeps its messages; subscribers of `changes` that could not see it before get it
   * as `CREATED`, those that could as `UPDATED`.
   */
  create(test: NewTest): Promise<TestRecord>;
  /**
   * One test with every message it holds, or null when unknown or expired. The API reads
   * summaries and pages instead (`getMany`, `messages`), so that what a caller may not see, or
   * did not ask for, is never read.
   */
  get(correlationId: string): Promise<TestRecord | null>;
  /**
   * Many tests in one call, in the order asked, without their messages (the DataLoader batch
   * function): what an ownership check and a test's own fields need. Null where a test is unknown
   * or expired.
   */
  getMany(correlationIds: readonly string[]): Promise<Array<TestSummary | null>>;
  /**
   * A page of one test's messages, in the test's order, reading that page rather than the whole
   * test where the store can (see each implementation); null when the test is unknown or expired.
   * The caller checks first whether the caller may see the test (with `getMany`).
   */
  messages(correlationId: string, range: MessageRange): Promise<MessageSlice | null>;
  /**
   * Stores a batch of messages, possibly of several tests, and answers one result per message in
   * the order given, each seeing the effect of the ones before it: a second copy of a key (in the
   * batch or already stored) is a `duplicate`, the per-test maximum applies as messages are added
   * (`over-limit`), and the status moves message by message. A test unknown so far is created.
   * Every `inserted` message is delivered to the test's followers, once, in the order stored;
   * nothing else is. Idempotent: a redelivered batch stores and announces nothing.
   */
  append(batch: readonly IncomingMessage[]): Promise<AppendResult[]>;
  /**
   * A page of tests, newest first (by `createdAt`, then by correlation id, descending), without
   * their messages; expired tests are never listed.
   */
  list(options: ListOptions): Promise<TestListPage>;
  /** Drops a test; used when the start request could not be handed to the broker. */
  remove(correlationId: string): Promise<boolean>;
  /** Resolves when the log can serve reads and writes; rejects with the reason otherwise. */
  check(): Promise<void>;
  /**
   * Stored messages this process skipped on reads because they could not be read (a shared store
   * written by something else); absent where the store cannot hold such messages.
   */
  unreadableMessages?(): number;
}

/**
 * The live side of the log: a test's messages as they are stored (`follow`, see follower.ts) and
 * the change feed of every test.
 */
export interface LiveResults {
  /**
   * Follows a test: its stored messages first, then each new one as it is appended (anywhere, for
   * a shared log), with no gap and no duplicate between the two; the iterator ends after the
   * message that finishes the test (or at once after the replay when it is finished already).
   * Rejects with NOT_FOUND for an unknown test. The implementations answer a `Follower`
   * (`follower.ts`), which can also be pushed to (the fan-out hub's way; `isFollower` tells).
   */
  follow(correlationId: string, options: FollowOptions): Promise<AsyncIterableIterator<TestMessage>>;
  /**
   * The change feed, from now on (nothing is replayed): `CREATED` when a test becomes known
   * (started, or first seen through its results), else `UPDATED` once per test per append that
   * stored something (natural coalescing: a batch of many messages of one test is one change),
   * and when a create fills in a test first seen through its results (see `create`).
   * Changes made anywhere arrive, for a shared log. Resolves once every later change will be delivered.
   */
  changes(options: ChangeOptions): Promise<AsyncIterableIterator<TestChangeEvent>>;
  /**
   * The change feed for the service's own use (the response cache): `listener` is told the id of
   * the test of every change `changes` would deliver, synchronously as it arrives, whoever owns
   * the test, with no event or queue per change. Resolves, once every later change will be
   * told, with the function that stops it; the log's stop stops it too. `listener` runs inside the
   * write that made the change (or the handler of the message that carried it): it must not throw.
   */
  watchChanges(listener: (correlationId: string) => void): Promise<() => void>;
  /** How changes reach this process (see {@link ChangeDelivery}); a log of one process always delivers them, and leaves this out. */
  changeDelivery?(): ChangeDelivery;
  /** Followers open in this process that take messages (not one paused while its subscriber is full), of one test or of all. */
  followers(correlationId?: string): number;
  /** Change feed subscribers of clients open in this process (the service's own watchers left out). */
  changeSubscribers(): number;
}

/** Both sides of one store, and its stop. */
export interface ResultLog extends ResultStore, LiveResults, Disposable {}
