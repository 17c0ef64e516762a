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
  /** Drops a test; used when the start request could not be handed to the broker. */
  remove(correlationId: string): Promise<boolean>;
  /** Resolves when the store can serve reads and writes; rejects with the reason otherwise. */
  check(): Promise<void>;
  dispose(): Promise<void>;
}
