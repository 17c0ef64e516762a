/**
 * A test as the memory log holds it (memory-result-log.ts): its entry, what it counts against the
 * log's bytes, its deduplication keys (by kind, so that the common kinds add no string per
 * message), and the record and summary read from it.
 */
import type { IncomingMessage, TestMessage, TestRecord, TestStatus, TestSummary } from '../domain/types.js';
import type { CompactTest, keyKind } from './compact-message.js';
import { indexOfKey, rowMessage, rowMessages, type MessageRows } from './message-rows.js';

/** The kind of a message's deduplication key (compact-message.ts). */
export type KeyKind = ReturnType<typeof keyKind>;

/** One test held by the memory log. */
export interface Entry {
  readonly correlationId: string;
  status: TestStatus;
  // Filled in by a create on a test first seen through its results (see `started`).
  input: unknown;
  owner: string | null;
  createdAt: number;
  updatedAt: number;
  /** Whether a create recorded it (started), rather than only its results (seen). */
  started: boolean;
  /** Its messages, in the test's order, as columns (message-rows.ts). */
  readonly rows: MessageRows;
  /** Messages stored so far: the next one's place in the order of arrival is one more (each message holds its own). */
  arrived: number;
  /** What the test's compact messages share. */
  readonly compact: CompactTest;
  /** Deduplication keys, by kind, so that the common kinds add no string per message. */
  readonly keys: DedupeKeys;
  /** What the test holds, as counted against `maxBytes`. */
  bytes: number;
}

/** Bytes a stored message holds beyond its texts: its compact object and its place in the arrays and sets. */
export const MESSAGE_OVERHEAD = 160;
/** Bytes a test holds beyond its messages and input: its entry, its map slot, its key sets. */
export const TEST_OVERHEAD = 400;

/** What a stored message holds, about: its payload's text, its own key or id (UTF-16), and its object. */
export function messageBytes(message: TestMessage & { readonly payloadJson?: string }, incoming: IncomingMessage): number {
  return MESSAGE_OVERHEAD + 2 * ((message.payloadJson ?? '').length + incoming.key.length);
}

/** What a test's input holds, about: its JSON text's length twice over (as a parsed value it is no smaller). */
export function inputBytes(input: unknown): number {
  return input === null || input === undefined ? 0 : 2 * (JSON.stringify(input)?.length ?? 0);
}

export interface DedupeKeys {
  /** `m:<id>` keys, held as the message id itself (already held by the message). */
  ids: Set<string> | null;
  /**
   * `s:<sequence>` keys, as numbers: the run of consecutive sequences from `runFrom` (inclusive) to
   * `runTo` (exclusive), which holds every sequence of a producer that counts up, and the set for
   * the rest. An in-order message costs a comparison and an increment, not a set entry.
   */
  runFrom: number;
  runTo: number;
  sequences: Set<number> | null;
  /** Any other key, as it is. */
  others: Set<string> | null;
}

/** Deduplication keys of a test that holds no message yet. */
export function noKeys(): DedupeKeys {
  return { ids: null, runFrom: 0, runTo: 0, sequences: null, others: null };
}

/** The stored copy of a duplicate (its key is held: see {@link hasKey}). */
export function findStored(entry: Entry, incoming: IncomingMessage): TestMessage {
  return rowMessage(entry.rows, entry.compact, indexOfKey(entry.rows, incoming.key));
}

export function hasKey(keys: DedupeKeys, message: IncomingMessage, kind: KeyKind): boolean {
  if (kind === 'id') return keys.ids?.has(message.messageId as string) === true;
  if (kind === 'sequence') {
    const sequence = message.sequence as number;
    return (sequence >= keys.runFrom && sequence < keys.runTo) || keys.sequences?.has(sequence) === true;
  }
  return keys.others?.has(message.key) === true;
}

export function addKey(keys: DedupeKeys, message: IncomingMessage, kind: KeyKind): void {
  if (kind === 'id') (keys.ids ??= new Set()).add(message.messageId as string);
  else if (kind === 'sequence') addSequence(keys, message.sequence as number);
  else (keys.others ??= new Set()).add(message.key);
}

/** Adds a sequence not yet held: it extends the run when it follows it (or starts it), else goes to the set. */
function addSequence(keys: DedupeKeys, sequence: number): void {
  if (keys.runFrom === keys.runTo) {
    keys.runFrom = sequence;
    keys.runTo = sequence + 1;
  } else if (sequence === keys.runTo) {
    keys.runTo += 1;
    // Sequences that arrived early join the run once the gap before them is filled.
    const early = keys.sequences;
    if (early !== null) while (early.delete(keys.runTo)) keys.runTo += 1;
  } else (keys.sequences ??= new Set()).add(sequence);
}

export function snapshot(entry: Entry): TestRecord {
  return {
    correlationId: entry.correlationId,
    status: entry.status,
    input: entry.input,
    owner: entry.owner,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    messages: rowMessages(entry.rows, entry.compact),
  };
}

export function summaryOf(entry: Entry): TestSummary {
  const { correlationId, status, input, owner, createdAt, updatedAt } = entry;
  return { correlationId, status, input, owner, createdAt, updatedAt, messageCount: entry.rows.length };
}
