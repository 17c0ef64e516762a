/**
 * A test's stored messages as columns rather than one object each: the payload texts in one
 * array, the numbers (flags, sequence, received and produced offsets) in another, unboxed, four to
 * a message, and the message ids and own keys in arrays made only when a message has one. Every
 * message the memory log stores outlives the young generation, and each object it is made of is
 * copied at two scavenges on its way to the old one: held as columns, a message is its payload's
 * text and a few array slots, where its compact object (88 bytes) was copied too (about 0.2 µs a
 * record stored, measured in process; bench/README.md).
 *
 * Reads get the same read-only views as before (compact-message.ts), made from a row when read: a
 * read is far rarer than a store, and a view lives only as long as its reader keeps it.
 */
import type { TestMessage } from '../domain/types.js';
import { compactView, isSequenceKey, type CompactFields, type CompactTest } from './compact-message.js';
import { cursorExpired } from './message-slice.js';
import type { MessageRange, MessageSlice } from './result-log.js';

/** Numbers per message in {@link MessageRows.numbers}: flags, sequence, received, produced. */
const STRIDE = 4;

/** One test's messages, in the test's order (by sequence, then arrival; domain/order.ts). */
export interface MessageRows {
  /** Messages held. */
  length: number;
  /** Each message's payload as JSON text. */
  readonly texts: string[];
  /** Four numbers a message: its flags, its sequence (NaN when none), and its received and produced offsets (NaN when none). */
  readonly numbers: number[];
  /** Message ids, made when the first message with one is stored (null before, and for messages without). */
  ids: (string | null)[] | null;
  /** Keys that cannot be derived (`o:…` and the like), made like `ids`. */
  ownKeys: (string | null)[] | null;
}

/** Rows that hold no message. */
export function noRows(): MessageRows {
  return { length: 0, texts: [], numbers: [], ids: null, ownKeys: null };
}

/** Stores `message` (a compact message just made) in the test's order: after every message whose sequence is not greater. */
export function insertRow(rows: MessageRows, message: CompactFields): void {
  const { numbers } = rows;
  const sequence = message.sequence;
  let index = rows.length;
  if (sequence !== null) {
    // As insertOrdered (domain/order.ts): a message without a sequence stops the walk back.
    while (index > 0) {
      const before = numbers[(index - 1) * STRIDE + 1] as number;
      if (Number.isNaN(before) || before <= sequence) break;
      index -= 1;
    }
  }
  const id = message.messageId;
  const ownKey = message.ownKey;
  if (id !== null && rows.ids === null) rows.ids = new Array<string | null>(rows.length).fill(null);
  if (ownKey !== null && rows.ownKeys === null) rows.ownKeys = new Array<string | null>(rows.length).fill(null);
  const produced = message.produced ?? NaN;
  if (index === rows.length) {
    rows.texts.push(message.payloadJson);
    numbers.push(message.flags, sequence ?? NaN, message.received, produced);
    rows.ids?.push(id);
    rows.ownKeys?.push(ownKey);
  } else {
    rows.texts.splice(index, 0, message.payloadJson);
    numbers.splice(index * STRIDE, 0, message.flags, sequence ?? NaN, message.received, produced);
    rows.ids?.splice(index, 0, id);
    rows.ownKeys?.splice(index, 0, ownKey);
  }
  rows.length += 1;
}

/** A read-only view of the message at `index`. */
export function rowMessage(rows: MessageRows, test: CompactTest, index: number): TestMessage {
  const at = index * STRIDE;
  const { numbers } = rows;
  const sequence = numbers[at + 1] as number;
  const produced = numbers[at + 3] as number;
  return compactView(
    test,
    rows.ids?.[index] ?? null,
    Number.isNaN(sequence) ? null : sequence,
    numbers[at] as number,
    numbers[at + 2] as number,
    Number.isNaN(produced) ? null : produced,
    rows.texts[index] as string,
    rows.ownKeys?.[index] ?? null,
  );
}

/** Views of the messages from `start` to `end` (exclusive). */
export function rowMessages(rows: MessageRows, test: CompactTest, start = 0, end = rows.length): TestMessage[] {
  const last = Math.min(end, rows.length);
  const out = new Array<TestMessage>(Math.max(0, last - start));
  for (let i = start; i < last; i++) out[i - start] = rowMessage(rows, test, i);
  return out;
}

/** The place of the message whose key is `key`, or -1; compares without building the stored keys. */
export function indexOfKey(rows: MessageRows, key: string): number {
  const { ids, ownKeys, numbers } = rows;
  for (let i = 0; i < rows.length; i++) {
    const own = ownKeys?.[i] ?? null;
    if (own !== null) {
      if (own === key) return i;
      continue;
    }
    const id = ids?.[i] ?? null;
    if (id !== null) {
      if (key.length === id.length + 2 && key.startsWith('m:') && key.endsWith(id)) return i;
      continue;
    }
    const sequence = numbers[i * STRIDE + 1] as number;
    if (!Number.isNaN(sequence) && isSequenceKey(key, sequence)) return i;
  }
  return -1;
}

/** The page `range` asks for (message-slice.ts's rules): after the message its cursor names, `first` of them. */
export function sliceRows(rows: MessageRows, test: CompactTest, range: MessageRange): MessageSlice {
  let start = 0;
  if (range.afterKey !== null && range.afterKey !== undefined) {
    const index = indexOfKey(rows, range.afterKey);
    if (index < 0) throw cursorExpired();
    start = index + 1;
  }
  const end = start + range.first;
  return { messages: rowMessages(rows, test, start, end), hasNextPage: end < rows.length, totalCount: rows.length };
}

/** The messages that arrived after the `passed`-th, in the order they arrived. */
export function rowsAfter(rows: MessageRows, test: CompactTest, passed: number): TestMessage[] {
  const later: TestMessage[] = [];
  for (let i = 0; i < rows.length; i++) {
    const message = rowMessage(rows, test, i);
    if (message.arrival > passed) later.push(message);
  }
  return later.sort((a, b) => a.arrival - b.arrival);
}
