/**
 * A test as the Redis log stores it (redis-result-log.ts has the key layout): the named fields of
 * its meta hash, the field its deduplication keys take there, and the record (or the summary)
 * read back from the hash and the list of messages.
 */
import { orderArrivals } from '../domain/order.js';
import { statusOf } from '../domain/status.js';
import type { IncomingMessage, TestMessage, TestRecord, TestStatus, TestSummary } from '../domain/types.js';
import { decodeMessages, INPUT_POSITION, readStoredInput } from './message-format.js';

/** The named fields of the meta hash. */
export const META_FIELDS = ['createdAt', 'updatedAt', 'input', 'owner', 'finishedAs'] as const;

/** The meta hash's field of a deduplication key: `~` keeps it apart from the named fields. */
export function dedupeField(key: string): string {
  return `~${key}`;
}

/** The named fields an HMGET of {@link META_FIELDS} answered, without the absent ones. */
export function metaFields(values: ReadonlyArray<string | null>): Record<string, string> {
  const fields: Record<string, string> = {};
  META_FIELDS.forEach((field, i) => {
    const value = values[i];
    if (value !== null && value !== undefined) fields[field] = value;
  });
  return fields;
}

/**
 * The record of a test from its meta fields and stored messages; null for a test not there. A
 * stored message that cannot be read is left out and reported to `onUnreadable`.
 */
export function toRecord(
  correlationId: string,
  meta: Record<string, string> | undefined,
  stored: string[] | undefined,
  onUnreadable: (position: number, reason: string) => void,
): TestRecord | null {
  if (meta?.createdAt === undefined) return null;
  const arrivals = decodeMessages(stored ?? [], correlationId, onUnreadable);
  const createdAt = Number(meta.createdAt);
  const last = arrivals[arrivals.length - 1];
  return {
    correlationId,
    status: statusOf((meta.finishedAs as TestStatus | undefined) ?? null, arrivals.length),
    input: readStoredInput(meta.input, (reason) => onUnreadable(INPUT_POSITION, reason)),
    owner: meta.owner ? meta.owner : null,
    createdAt,
    // Every append that stores something stores messages received at its own instant.
    updatedAt: last === undefined ? createdAt : Math.max(createdAt, last.receivedAt),
    messages: orderArrivals(arrivals),
  };
}

/**
 * The summary of a test from its meta fields and the length of its list (every stored message,
 * read or not); null for a test not there. Its `updatedAt` is the meta field every write sets, as
 * the lists of tests read it.
 */
export function toSummary(
  correlationId: string,
  meta: Record<string, string>,
  count: number,
  onUnreadable?: (position: number, reason: string) => void,
): TestSummary | null {
  if (meta.createdAt === undefined) return null;
  const createdAt = Number(meta.createdAt);
  return {
    correlationId,
    status: statusOf((meta.finishedAs as TestStatus | undefined) ?? null, count),
    input: readStoredInput(meta.input, onUnreadable === undefined ? undefined : (reason) => onUnreadable(INPUT_POSITION, reason)),
    owner: meta.owner ? meta.owner : null,
    createdAt,
    updatedAt: meta.updatedAt === undefined ? createdAt : Number(meta.updatedAt),
    messageCount: count,
  };
}

/** The message as stored: the incoming fields (without the payload's text), its receivedAt and its place in arrival order. */
export function storedMessage(incoming: IncomingMessage, receivedAt: number, arrival: number): TestMessage {
  const { correlationId, key, messageId, sequence, status, final, payload, producedAt } = incoming;
  return { correlationId, key, messageId, sequence, status, final, payload, producedAt, receivedAt, arrival };
}
