/**
 * The service's own model of tests and their results. Transport-neutral: the GraphQL layer, the
 * REST routes, the stores and the ingest path all speak these types.
 */

/** Where a test stands, derived from the results received so far. */
export type TestStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';

/** Statuses after which a test is finished; later messages are still stored. */
export const TERMINAL_STATUSES: ReadonlySet<TestStatus> = new Set(['COMPLETED', 'FAILED']);

/**
 * One result message, as stored. Times are epoch milliseconds (cheaper to hold than strings).
 * Read-only: a store may return a view whose fields are computed; see {@link plainMessage}.
 */
export interface TestMessage {
  readonly correlationId: string;
  /** Deduplication key inside the test: `m:<messageId>`, `s:<sequence>` or `o:<topic>/<partition>/<offset>`. */
  readonly key: string;
  readonly messageId: string | null;
  readonly sequence: number | null;
  readonly status: TestStatus | null;
  readonly final: boolean;
  readonly payload: unknown;
  readonly producedAt: number | null;
  readonly receivedAt: number;
  /**
   * The message's place among its test's messages in the order they were stored, from 1, whatever
   * their sequences: subscriptions deliver in this order, and a cursor names this place, so a
   * resumed subscriber gets exactly what it was not pushed, in any order of arrival.
   */
  readonly arrival: number;
}

/** A decoded result message before it is stored (the store stamps `receivedAt` and `arrival`). */
export type IncomingMessage = Omit<TestMessage, 'receivedAt' | 'arrival'>;

/** One test and everything received for it. `messages` is a snapshot the caller may keep. */
export interface TestRecord {
  readonly correlationId: string;
  readonly status: TestStatus;
  /** The `startTest` input, or null when the test was first seen through its results. */
  readonly input: unknown;
  /** The subject (`sub`) that started the test; null when it was first seen through its results. */
  readonly owner: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly messages: readonly TestMessage[];
}

/**
 * A test without its messages: what a list of tests and a change feed carry, so that reading a
 * page of tests never loads every message of every test.
 */
export interface TestSummary extends Omit<TestRecord, 'messages'> {
  /** How many distinct messages the test holds. */
  readonly messageCount: number;
}

/**
 * A test as a change reports it: its summary, where `input` is absent when the change did not set
 * it (an append never does); it is then read from the store when asked for.
 */
export type ChangedTest = Omit<TestSummary, 'input'> & { readonly input?: unknown };

/**
 * A test as the transports see it: whole, or a summary whose messages (and, from a change, input)
 * are read when asked for.
 */
export type TestView = TestRecord | TestSummary | ChangedTest;

/** One page of tests, newest first (cursor pagination). */
export interface TestListPage {
  readonly edges: readonly TestListEdge[];
  readonly hasNextPage: boolean;
  /** How many tests match the filter, in all. */
  readonly totalCount: number;
}

/** A test summary with its opaque cursor. */
export interface TestListEdge {
  readonly cursor: string;
  readonly node: TestSummary;
}

/** What happened to a test: started, or its status or message count changed. */
export interface TestChangeEvent {
  readonly kind: 'CREATED' | 'UPDATED';
  /** The test as it stands after the change. */
  readonly test: ChangedTest;
}

/** What the result log reports for each message of an append. */
export interface AppendResult {
  /**
   * `inserted`: stored now, and delivered to the test's followers. `duplicate`: already stored (a redelivery),
   * nothing changed. `over-limit`: the test holds the maximum number of messages (or, in memory, the
   * message does not fit the store's byte budget); not stored.
   */
  readonly outcome: 'inserted' | 'duplicate' | 'over-limit';
  /** The test's status after the append. */
  readonly status: TestStatus;
  /** The stored message (the earlier copy for a duplicate). */
  readonly message: TestMessage;
}

/** What `startTest` returns to the transports. */
export interface StartTestResult {
  readonly correlationId: string;
  readonly test: TestRecord;
}

/** One page of a test's messages (cursor pagination). */
export interface MessagePage {
  readonly edges: readonly MessageEdge[];
  readonly hasNextPage: boolean;
  readonly totalCount: number;
}

/** A message with its opaque cursor. */
export interface MessageEdge {
  readonly cursor: string;
  readonly node: TestMessage;
}

/** What a follower receives for every newly stored message. */
export interface TestMessageEvent {
  readonly message: TestMessage;
  /** The test's status after this message was stored. */
  readonly status: TestStatus;
  /**
   * The message's place in the order its test's messages were stored, from 1 (the store's own
   * count, whatever the messages' sequences): a follower that pauses catches up from the store
   * after the last place it passed.
   */
  readonly arrival: number;
}

/**
 * A plain copy of a message, every field an own property. Stores may hand out read-only views
 * whose fields are computed (the memory store's compact messages): read their fields, or take
 * this copy, rather than spreading or cloning them.
 */
export function plainMessage(message: TestMessage): TestMessage {
  const { correlationId, key, messageId, sequence, status, final, payload, producedAt, receivedAt, arrival } = message;
  return { correlationId, key, messageId, sequence, status, final, payload, producedAt, receivedAt, arrival };
}

/** The globally unique id of a message, as exposed to clients. */
export function messageGlobalId(message: TestMessage): string {
  return `${message.correlationId}/${message.key}`;
}
