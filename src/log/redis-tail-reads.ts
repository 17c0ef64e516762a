/**
 * What the tails (redis-tail.ts) read on the log's command connection: how many messages a test
 * holds and its status after them, and its messages from an arrival index on, in arrival order.
 */
import { statusOf } from '../domain/status.js';
import type { TestStatus } from '../domain/types.js';
import { createHash } from 'node:crypto';
import { readStoredMessage } from './message-format.js';
import type { RedisClient } from '../redis/redis-client.js';
import { whenReady } from '../redis/redis-ready.js';
import type { TailReads } from './redis-tail-catch-up.js';
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
    async head(correlationId) {
      await ready();
      const k = keysOf(correlationId);
      // One MULTI: the count and the status as of one instant (a test's keys share a slot).
      const results = await redis.multi().llen(k.msgs).hget(k.meta, 'finishedAs').exec().catch(failed);
      for (const [error] of results ?? []) if (error) failed(error);
      const count = Number(results?.[0]?.[1]);
      return { count, status: statusOf((results?.[1]?.[1] as TestStatus | null) ?? null, count) };
    },
    async exists(correlationId) {
      await ready();
      return (await redis.exists(keysOf(correlationId).meta).catch(failed)) === 1;
    },
    async after(correlationId, from) {
      await ready();
      const stored = await redis.lrange(keysOf(correlationId).msgs, from, -1).catch(failed);
      return stored.map((text, i) => {
        const read = readStoredMessage(text, correlationId, from + i + 1);
        if ('message' in read) return read.message;
        options.onUnreadable?.(correlationId, from + i, read.unreadable);
        return { key: `\u0000${createHash('sha256').update(text).digest('base64')}`, unreadable: read.unreadable };
      });
    },
  };
}
