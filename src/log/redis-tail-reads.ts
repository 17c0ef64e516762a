/**
 * What the tails (redis-tail.ts) read on the log's command connection: how many messages a test
 * holds, its status after them and the keys of its last entries, and its entries from an arrival
 * index on, in arrival order.
 */
import { statusOf } from '../domain/status.js';
import type { TestMessage, TestStatus } from '../domain/types.js';
import { createHash } from 'node:crypto';
import { readStoredMessage } from './message-format.js';
import type { RedisClient } from '../redis/redis-client.js';
import { whenReady } from '../redis/redis-ready.js';
import type { TailReads, UnreadableEntry } from './redis-tail-catch-up.js';
import type { RedisTestKeys } from './redis-test-keys.js';

/** Options of {@link createRedisTailReads}. */
export interface RedisTailReadsOptions {
  /** The command connection (one node, or a Redis Cluster). */
  readonly redis: RedisClient;
  /** A test's keys: its meta hash and its list of messages. */
  readonly keysOf: (correlationId: string) => RedisTestKeys;
  /**
   * How long a read waits for the connection while it reconnects before it is sent (and fails):
   * a follower starting, or a tail catching up after the subscriber connection came back first.
   */
  readonly readyWithinMs?: number;
  /** Sees the error of every failed read before it is thrown (the log refreshes a cluster's slot map on a redirection). */
  readonly onError?: (error: unknown) => void;
  /** Told of each stored text that holds no message (it is skipped, not delivered). */
  readonly onUnreadable?: (correlationId: string, position: number, reason: string) => void;
}

/** Creates the {@link TailReads} of the Redis log. */
export function createRedisTailReads(options: RedisTailReadsOptions): TailReads {
  const { redis, keysOf } = options;
  const ready = () => whenReady(redis, options.readyWithinMs ?? 0);
  const failed = (error: unknown): never => {
    options.onError?.(error);
    throw error;
  };
  return {
    async head(correlationId, keys = 0) {
      await ready();
      const k = keysOf(correlationId);
      // One MULTI: the count, the status and the last entries as of one instant (a test's keys share a slot).
      const multi = redis.multi().llen(k.msgs).hget(k.meta, 'finishedAs');
      // LRANGE -0 -1 would be the whole list: the last entries only when asked for.
      if (keys > 0) multi.lrange(k.msgs, -keys, -1);
      const results = await multi.exec().catch(failed);
      for (const [error] of results ?? []) if (error) failed(error);
      const count = Number(results?.[0]?.[1]);
      const last = (results?.[2]?.[1] as string[] | undefined) ?? [];
      return {
        count,
        status: statusOf((results?.[1]?.[1] as TestStatus | null) ?? null, count),
        keys: last.map((text, i) => entryOf(text, correlationId, count - last.length + i).key),
      };
    },
    async exists(correlationId) {
      await ready();
      return (await redis.exists(keysOf(correlationId).meta).catch(failed)) === 1;
    },
    async after(correlationId, from) {
      await ready();
      const stored = await redis.lrange(keysOf(correlationId).msgs, from, -1).catch(failed);
      return stored.map((text, i) => entryOf(text, correlationId, from + i));
    },
  };

  /** The entry of the stored `text` at arrival index `position`: its message, or what stands for a text that holds none. */
  function entryOf(text: string, correlationId: string, position: number): TestMessage | UnreadableEntry {
    const read = readStoredMessage(text, correlationId, position + 1);
    if ('message' in read) return read.message;
    options.onUnreadable?.(correlationId, position, read.unreadable);
    return { key: `\u0000${createHash('sha256').update(text).digest('base64')}`, unreadable: read.unreadable };
  }
}
