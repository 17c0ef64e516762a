/**
 * The one wire format of the shared log: how a message is stored in Redis and how a test's
 * followers learn that it grew. The append script never looks inside either: it stores the text
 * it is given and publishes the count it keeps, so this file is the only place that knows them.
 *
 * - A stored message is its JSON without `correlationId` (its test's key names it), `receivedAt`
 *   included, with the payload's text as it arrived when the decoder kept it (never parsed and
 *   serialized again on the way in).
 * - A notice, published on the test's channel after every append that stored something, is the
 *   number of messages the test holds since then, in decimal: a follower that has delivered fewer
 *   reads the rest from its list, so a notice it missed costs nothing but the wait for the next one
 *   or for its connection to come back.
 * - A change, published on the change channel by the append and create scripts
 *   (redis-append-script.ts builds it with cjson), is a JSON object naming the test and its state
 *   after the change: everything a test summary holds, without reading the test again.
 */
import { jsonShapeFault, SERVABLE_JSON_SHAPE } from '../base/json-shape.js';
import { statusOf } from '../domain/status.js';
import type { ChangedTest, IncomingMessage, TestChangeEvent, TestMessage, TestStatus, TestSummary } from '../domain/types.js';

const text = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));
const number = (value: number | null) => (value === null ? 'null' : String(value));

/**
 * How the stored text of the message with `key` begins: what the page script looks for to find a
 * message in a test's list without decoding any (its key comes first, and a key is unique in its test).
 */
export function storedTextStart(key: string): string {
  return `{"key":${JSON.stringify(key)},`;
}

/** The stored text of `message`, received at `receivedAt`. */
export function encodeMessage(message: IncomingMessage, receivedAt: number): string {
  const payload = JSON.stringify(message.payload) ?? 'null';
  // Written field by field: cheaper than building an object for JSON.stringify, and the payload's
  // own text goes in as it is.
  return `${storedTextStart(message.key)}"messageId":${text(message.messageId)},"sequence":${number(message.sequence)},"status":${text(message.status)},"final":${message.final},"payload":${payload},"producedAt":${number(message.producedAt)},"receivedAt":${receivedAt}}`;
}

const STATUSES: ReadonlySet<unknown> = new Set<TestStatus | null>(['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', null]);
const isTime = (value: unknown) => value === null || (typeof value === 'number' && Number.isFinite(value));

/**
 * Why a parsed stored text is not a message this version can serve, or undefined when it is. Every
 * field a read hands to clients is checked: one field of the wrong type would otherwise fail the
 * serialization of the whole test.
 */
function unreadable(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const m = value as Record<string, unknown>;
  if (typeof m.key !== 'string') return 'key is not a string';
  if (m.messageId !== null && typeof m.messageId !== 'string') return 'messageId is neither a string nor null';
  if (m.sequence !== null && !Number.isSafeInteger(m.sequence)) return 'sequence is neither an integer nor null';
  if (!STATUSES.has(m.status)) return 'status is not a known status';
  if (typeof m.final !== 'boolean') return 'final is not a boolean';
  if (!('payload' in m)) return 'no payload';
  if (!isTime(m.producedAt) || typeof m.receivedAt !== 'number' || !Number.isFinite(m.receivedAt)) return 'a time is not a number';
  // Stored before the shape limits existed, or by another release: serializing it would fail the read.
  const fault = jsonShapeFault(m.payload, SERVABLE_JSON_SHAPE);
  if (fault !== undefined) return `payload is ${fault.reason}`;
  return undefined;
}

/** Position reported to an `onUnreadable` callback for a test's stored input (messages count from 0). */
export const INPUT_POSITION = -1;

/**
 * The input a stored JSON text holds, or null when it holds none this version can serve (not
 * JSON, or past the widest shape limits: written before they existed or by another release), said
 * to `onUnreadable`. One such input never fails a read of its test, nor a list it is in.
 */
export function readStoredInput(stored: string | null | undefined, onUnreadable?: (reason: string) => void): unknown {
  if (stored === null || stored === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    onUnreadable?.('input is not JSON');
    return null;
  }
  const fault = jsonShapeFault(value, SERVABLE_JSON_SHAPE);
  if (fault === undefined) return value;
  onUnreadable?.(`input is ${fault.reason}`);
  return null;
}

/** The message a stored text of test `correlationId` holds (its `arrival`-th), or why it holds none. */
export function readStoredMessage(stored: string, correlationId: string, arrival: number): { readonly message: TestMessage } | { readonly unreadable: string } {
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return { unreadable: 'not JSON' };
  }
  const reason = unreadable(value);
  if (reason !== undefined) return { unreadable: reason };
  (value as { correlationId: string }).correlationId = correlationId;
  (value as { arrival: number }).arrival = arrival;
  return { message: value as TestMessage };
}

/**
 * The messages the stored texts of test `correlationId` hold, in their order. A text that holds
 * none (written by another version, or damaged) is skipped and reported to `onUnreadable` with its
 * position: one bad message never makes the whole test unreadable.
 */
export function decodeMessages(
  stored: readonly string[],
  correlationId: string,
  onUnreadable: (position: number, reason: string) => void,
  /** The list index of the first text (a page read from the middle of the list). */
  from = 0,
): TestMessage[] {
  const messages: TestMessage[] = [];
  for (let i = 0; i < stored.length; i++) {
    const read = readStoredMessage(stored[i] as string, correlationId, from + i + 1);
    if ('message' in read) messages.push(read.message);
    else onUnreadable(i, read.unreadable);
  }
  return messages;
}

/** The count a notice carries (NaN for a notice that is not one). */
export function decodeNotice(notice: string): number {
  return Number(notice);
}

interface ChangeText {
  readonly id: string;
  readonly created: number;
  readonly owner: string;
  readonly finishedAs: string;
  readonly count: number;
  readonly createdAt: string | number;
  readonly updatedAt: string | number;
  /** Only in a change that sets the input (a create); absent from an append's. */
  readonly input?: string;
}

/** A change as published: the event, and for a test a create filled in, the test as it stood before. */
export interface PublishedChange {
  readonly change: TestChangeEvent;
  /** Set when the change filled in a test first seen through its results (see ChangeFeed.emit). */
  readonly before?: TestSummary;
}

/** The change a published text carries, or null for a text that is not one. */
export function decodeChange(text: string): PublishedChange | null {
  try {
    const change = JSON.parse(text) as ChangeText;
    const count = Number(change.count);
    const test: ChangedTest = {
      correlationId: change.id,
      status: statusOf(change.finishedAs === '' ? null : (change.finishedAs as TestStatus), count),
      ...(change.input === undefined ? {} : { input: readStoredInput(change.input) }),
      owner: change.owner === '' ? null : change.owner,
      createdAt: Number(change.createdAt),
      updatedAt: Number(change.updatedAt),
      messageCount: count,
    };
    // Filled in (2): before, the test had neither input nor owner.
    if (change.created === 2) return { change: { kind: 'CREATED', test }, before: { ...test, input: null, owner: null } };
    return { change: { kind: change.created === 1 ? 'CREATED' : 'UPDATED', test } };
  } catch {
    return null;
  }
}
