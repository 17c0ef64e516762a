/**
 * The Redis variant of the peer's store, so that replicas share their tests: per test a hash (the
 * test's fields), a list (its messages as JSON, in arrival order) and a set (the sequences seen,
 * for deduplication), with ioredis as its README shows, a MULTI for the writes that belong together.
 */
import type { Redis } from 'ioredis';
import { statusAfter, type PeerMessage, type PeerStore, type PeerTest } from './store.js';

/** A store on `redis` under keys starting with `prefix`; `close()` does not close the connection. */
export function createRedisStore(redis: Redis, prefix: string): PeerStore {
  const testKey = (id: string) => `${prefix}:test:${id}`;
  const listKey = (id: string) => `${prefix}:messages:${id}`;
  const seenKey = (id: string) => `${prefix}:seen:${id}`;
  return {
    async createTest(correlationId, input) {
      const now = Date.now();
      await redis.hset(testKey(correlationId), { status: 'PENDING', input: JSON.stringify(input ?? null), messageCount: 0, createdAt: now, updatedAt: now });
    },
    async addMessage(message) {
      const id = message.correlationId;
      // SADD answers 0 for a sequence already there: the redelivery is recognised and dropped.
      if (message.sequence !== null && (await redis.sadd(seenKey(id), String(message.sequence))) === 0) return false;
      await redis
        .multi()
        .rpush(listKey(id), JSON.stringify(message))
        .hsetnx(testKey(id), 'createdAt', message.receivedAt)
        .hset(testKey(id), { status: statusAfter(message), updatedAt: message.receivedAt })
        .hincrby(testKey(id), 'messageCount', 1)
        .exec();
      return true;
    },
    async getTests(ids) {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(testKey(id));
      const answers = (await pipeline.exec()) ?? [];
      return answers.map(([error, fields], i): PeerTest | null => {
        if (error) throw error;
        const f = fields as Record<string, string>;
        if (f.createdAt === undefined) return null;
        return {
          correlationId: ids[i] as string,
          status: f.status ?? 'PENDING',
          input: f.input === undefined ? null : (JSON.parse(f.input) as unknown),
          messageCount: Number(f.messageCount ?? 0),
          createdAt: Number(f.createdAt),
          updatedAt: Number(f.updatedAt ?? f.createdAt),
        };
      });
    },
    async getMessages(correlationId, first, after) {
      const start = after === undefined ? 0 : after + 1;
      const [range, length] =
        (await redis
          .multi()
          .lrange(listKey(correlationId), start, start + first - 1)
          .llen(listKey(correlationId))
          .exec()) ?? [];
      return { nodes: ((range?.[1] as string[] | undefined) ?? []).map((text) => JSON.parse(text) as PeerMessage), totalCount: Number(length?.[1] ?? 0) };
    },
    async close() {
      // The connection is the caller's.
    },
  };
}
