/**
 * The state seam: a map from correlation id to its test record. Every implementation (memory now,
 * Redis for many replicas) passes the same contract suite in test/store/.
 */
import type { AppendResult, IncomingMessage, TestRecord } from '../domain/types.js';

/** What `create` records for a newly started test. */
export interface NewTest {
  readonly correlationId: string;
  readonly input: unknown;
  /** The subject that started it. */
  readonly owner: string | null;
}

/** Storage of tests and their messages, keyed by correlation id. */
export interface Store {
  /** Records a new test with no messages; keeps the existing record if one is already there. */
  create(test: NewTest): Promise<TestRecord>;
  /** One test, or null when unknown or expired. */
  get(correlationId: string): Promise<TestRecord | null>;
  /** Many tests in one call, in the order asked (the DataLoader batch function). */
  getMany(correlationIds: readonly string[]): Promise<Array<TestRecord | null>>;
  /**
   * Stores a message unless one with the same key is already stored for its test (a redelivery).
   * Creates the record when the test is unknown: results may outlive or precede this process.
   */
  append(message: IncomingMessage): Promise<AppendResult>;
  /**
   * Stores several messages at once, possibly of several tests, and answers one result per message
   * in the order given: exactly what calling {@link Store.append} for each, in that order, would
   * answer. A second copy of a key inside the batch is a `duplicate` of the first, the per-test
   * maximum applies as the messages are added, and the status moves message by message.
   */
  appendMany(messages: readonly IncomingMessage[]): Promise<AppendResult[]>;
  /** Drops a test; used when the start request could not be handed to the broker. */
  remove(correlationId: string): Promise<boolean>;
  /** Resolves when the store can serve reads and writes; rejects with the reason otherwise. */
  check(): Promise<void>;
  dispose(): Promise<void>;
}
