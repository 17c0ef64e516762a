/**
 * The Redis log's reads of one test (redis-result-log.ts has the key layout): the test with its
 * messages and the length of its list (a follower's snapshot), its summary, and a page of its
 * messages. Each reads as of one instant: a MULTI, or the page script. A stored message that cannot
 * be read is skipped and counted (unreadable-messages.ts), never failing the read.
 */
import { orderArrivals } from '../domain/order.js';
import type { TestRecord } from '../domain/types.js';
import type { RedisClient } from '../redis/redis-client.js';
import { decodeMessages, storedTextStart } from './message-format.js';
import { cursorExpired, sliceMessages } from './message-slice.js';
import { dedupeField, META_FIELDS, metaFields, toRecord, toSummary } from './redis-record.js';
import type { MessageRange, MessageSlice } from './result-log.js';
import type { UnreadableMessages } from './unreadable-messages.js';
import type { RedisTestKeys } from './redis-test-keys.js';

/** A test's keys, as the reads use them. */
/** Options of {@link createRedisReads}. */
export interface RedisReadsOptions {
  readonly redis: RedisClient;
  readonly keysOf: (id: string) => RedisTestKeys;
  /**
   * Runs the page script (redis-page-script.ts) for a test's keys, the page's first index, the
   * deduplication field and the stored text's start of the message it comes after ('' for none).
   */
  readonly page: (keys: RedisTestKeys, first: number, field: string, start: string) => Promise<[number, number, string[]] | null>;
  readonly unreadable: UnreadableMessages;
}

/** The reads of one test. */
export interface RedisReads {
  /** A test and the length of its list (unreadable entries included): a follower's snapshot. */
  readArrivals(correlationId: string): Promise<{ record: TestRecord | null; arrivals: number }>;
  /** A test's summary: its meta fields and the length of its list. */
  summary(correlationId: string): Promise<ReturnType<typeof toSummary>>;
  /** A page of a test's messages. */
  page(correlationId: string, range: MessageRange): Promise<MessageSlice | null>;
}

/** Creates the reads of the Redis log. */
export function createRedisReads(options: RedisReadsOptions): RedisReads {
  const { redis, keysOf, unreadable } = options;
  const skip = (id: string) => (position: number, reason: string) => unreadable.report(id, position, reason);

  /** A test and the length of its list (unreadable entries included): a follower's snapshot. */
  const readArrivals = async (correlationId: string): Promise<{ record: TestRecord | null; arrivals: number }> => {
    const k = keysOf(correlationId);
    // One MULTI: the meta and the messages as of one instant (a test's keys share a slot). The
    // named fields only: the meta hash holds the deduplication keys too.
    const results = await redis
      .multi()
      .hmget(k.meta, ...META_FIELDS)
      .lrange(k.msgs, 0, -1)
      .exec();
    for (const [error] of results ?? []) if (error) throw error;
    const stored = results?.[1]?.[1] as string[];
    return { record: toRecord(correlationId, metaFields(results?.[0]?.[1] as Array<string | null>), stored, skip(correlationId)), arrivals: stored.length };
  };

  /** A test's summary: its meta fields and the length of its list, as of one instant (one MULTI). */
  const summary = async (correlationId: string) => {
    const k = keysOf(correlationId);
    const results = await redis
      .multi()
      .hmget(k.meta, ...META_FIELDS)
      .llen(k.msgs)
      .exec();
    for (const [error] of results ?? []) if (error) throw error;
    return toSummary(correlationId, metaFields(results?.[0]?.[1] as Array<string | null>), Number(results?.[1]?.[1]), skip(correlationId));
  };

  /**
   * A page of a test's messages (redis-page-script.ts): the page's range of the list while the list
   * is in read order, else the whole list, ordered here.
   */
  const page = async (correlationId: string, range: MessageRange): Promise<MessageSlice | null> => {
    const k = keysOf(correlationId);
    const afterKey = range.afterKey ?? null;
    const first = Math.max(0, range.first);
    const reply = await options.page(k, first, afterKey === null ? '' : dedupeField(afterKey), afterKey === null ? '' : storedTextStart(afterKey));
    if (reply === null) return null;
    const [length, start, stored] = reply;
    if (start === -2) throw cursorExpired();
    if (start === -1) return sliceMessages(orderArrivals(decodeMessages(stored, correlationId, skip(correlationId))), range);
    const messages = decodeMessages(stored, correlationId, (position, reason) => unreadable.report(correlationId, start + position, reason), start);
    return { messages, hasNextPage: start + first < length, totalCount: length };
  };

  return { readArrivals, summary, page };
}
