/**
 * Shared state in Redis, so that every replica reads and writes the same tests. Appending is one
 * Lua script (redis-append-script.ts) per batch of messages: the deduplication check, the ordered
 * insert, the status change and the expiry refresh happen atomically in Redis, so two replicas or a
 * redelivery can never store a message twice, and a batch costs one round trip. Reads of many
 * tests are one pipeline.
 *
 * Keys per test (all expire together, refreshed on every write):
 *   {prefix}:{id}:meta   hash  correlationId, status, input (JSON), owner, createdAt, updatedAt
 *   {prefix}:{id}:msgs   list  messages in order, each `<sequence or empty>\t<JSON>`: the script
 *                              orders by the prefix and never decodes a payload
 *   {prefix}:{id}:keys   hash  deduplication key -> receivedAt of the stored copy
 * The `{id}` hash tag keeps one test's keys in one Redis Cluster slot, but a batch touches the keys
 * of several tests in one script, which Redis Cluster refuses across slots: the store targets a
 * single Redis primary (it takes an ioredis `Redis`, not a `Cluster`).
 */
import type { Redis } from 'ioredis';
import type { AppendResult, IncomingMessage, TestMessage, TestRecord, TestStatus } from '../domain/types.js';
import { nextStatus } from '../domain/status.js';
import { ServiceError } from '../errors.js';
import { APPEND_MANY } from './redis-append-script.js';
import type { NewTest, Store } from './store.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** A connected ioredis client; the store does not own it and does not close it. */
  readonly redis: Redis;
  readonly ttlSeconds: number;
  readonly maxMessagesPerTest: number;
  /** Key prefix, so several deployments can share one Redis. */
  readonly prefix?: string;
  /**
   * When set, a newly stored message is published to `<publishPrefix><correlationId>` by the same
   * script that stores it (the Redis PubSub's channel), so storing and announcing cannot be split
   * by a failure between two commands. Results then report `published: true`.
   */
  readonly publishPrefix?: string;
}

/** The batch script's one-letter answers. */
const OUTCOMES = { i: 'inserted', d: 'duplicate', o: 'over-limit' } as const;
const STATUSES = { P: 'PENDING', R: 'RUNNING', C: 'COMPLETED', F: 'FAILED' } as const;

/** Creates the Redis {@link Store}. */
export function createRedisStore(options: RedisStoreOptions): Store {
  const { redis, ttlSeconds, publishPrefix } = options;
  const prefix = options.prefix ?? 'rcs';
  const keysOf = (id: string) => {
    const base = `${prefix}:{${id}}`;
    return { meta: `${base}:meta`, msgs: `${base}:msgs`, keys: `${base}:keys` } as const;
  };

  // ioredis sends EVALSHA and falls back to EVAL when the script is not cached (after a restart).
  // The batch's number of keys varies: it is its first argument.
  redis.defineCommand('rcsAppendMany', { lua: APPEND_MANY });
  const scripts = redis as unknown as {
    rcsAppendMany(args: Array<string | number>): Promise<string[]>;
  };
  const toResult = (incoming: IncomingMessage, outcome: string, status: string, receivedAt: string): AppendResult => {
    const { payloadJson: _text, ...fields } = incoming;
    const message: TestMessage = { ...fields, receivedAt: Number(receivedAt) };
    const published = outcome === 'inserted' && publishPrefix !== undefined;
    return { outcome: outcome as AppendResult['outcome'], status: status as TestStatus, message, ...(published ? { published } : {}) };
  };

  const appendMany = async (batch: readonly IncomingMessage[]): Promise<AppendResult[]> => {
    if (batch.length === 0) return [];
    const now = Date.now();
    const tests = new Map<string, number>();
    const keys: string[] = [];
    const ids: string[] = [];
    const fields: Array<string | number> = [];
    for (const incoming of batch) {
      const { correlationId, key, messageId, sequence, status, final, payload, producedAt, payloadJson } = incoming;
      let test = tests.get(correlationId);
      if (test === undefined) {
        test = tests.size + 1;
        tests.set(correlationId, test);
        const k = keysOf(correlationId);
        keys.push(k.meta, k.msgs, k.keys);
        ids.push(correlationId);
      }
      const seq = sequence === null ? '' : String(sequence);
      // The list item: the message as JSON with receivedAt last, after its sequence for ordering.
      // The payload's text as it arrived, when the decoder kept it, goes in as it is.
      const json =
        payloadJson === undefined
          ? JSON.stringify({ correlationId, key, messageId, sequence, status, final, payload, producedAt, receivedAt: now })
          : `${JSON.stringify({ correlationId, key, messageId, sequence, status, final }).slice(0, -1)},"payload":${payloadJson},"producedAt":${JSON.stringify(producedAt)},"receivedAt":${now}}`;
      const item = `${seq}\t${json}`;
      // What the message makes of an unfinished test; the script keeps a finished one as it is.
      fields.push(test, key, seq, nextStatus('RUNNING', incoming), item);
    }
    const reply = await scripts.rcsAppendMany([keys.length, ...keys, now, ttlSeconds, options.maxMessagesPerTest, publishPrefix ?? '', ids.length, ...ids, ...fields]);
    return batch.map((incoming, i) => {
      const answer = reply[i] as string;
      const outcome = OUTCOMES[answer[0] as keyof typeof OUTCOMES];
      return toResult(incoming, outcome, STATUSES[answer[1] as keyof typeof STATUSES], outcome === 'duplicate' ? answer.slice(2) : String(now));
    });
  };

  const wrap = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      throw new ServiceError('STORE_UNAVAILABLE', 'The state store (Redis) is unavailable.', { cause: error });
    }
  };

  return {
    create: (test: NewTest) =>
      wrap(async () => {
        const k = keysOf(test.correlationId);
        const now = Date.now();
        const results = await redis
          .multi()
          .hsetnx(k.meta, 'correlationId', test.correlationId)
          .hsetnx(k.meta, 'status', 'PENDING')
          .hsetnx(k.meta, 'input', JSON.stringify(test.input ?? null))
          .hsetnx(k.meta, 'owner', test.owner ?? '')
          .hsetnx(k.meta, 'createdAt', now)
          .hsetnx(k.meta, 'updatedAt', now)
          .expire(k.meta, ttlSeconds)
          .hgetall(k.meta)
          .lrange(k.msgs, 0, -1)
          .exec();
        const meta = results?.[7]?.[1] as Record<string, string>;
        const messages = results?.[8]?.[1] as string[];
        return toRecord(meta, messages) as TestRecord;
      }),

    get: (correlationId) =>
      wrap(async () => {
        const k = keysOf(correlationId);
        const results = await redis.multi().hgetall(k.meta).lrange(k.msgs, 0, -1).exec();
        return toRecord(results?.[0]?.[1] as Record<string, string>, results?.[1]?.[1] as string[]);
      }),

    getMany: (correlationIds) =>
      wrap(async () => {
        if (correlationIds.length === 0) return [];
        const pipeline = redis.pipeline();
        for (const id of correlationIds) {
          const k = keysOf(id);
          pipeline.hgetall(k.meta).lrange(k.msgs, 0, -1);
        }
        const results = (await pipeline.exec()) ?? [];
        return correlationIds.map((_, i) => {
          const [metaError, meta] = results[2 * i] ?? [];
          const [msgsError, msgs] = results[2 * i + 1] ?? [];
          if (metaError || msgsError) throw metaError ?? msgsError;
          return toRecord(meta as Record<string, string>, msgs as string[]);
        });
      }),

    // The consumer always appends in batches; a single append is a batch of one.
    append: (incoming) => wrap(async () => (await appendMany([incoming]))[0] as AppendResult),

    appendMany: (batch) => wrap(() => appendMany(batch)),

    remove: (correlationId) =>
      wrap(async () => {
        const k = keysOf(correlationId);
        return (await redis.del(k.meta, k.msgs, k.keys)) > 0;
      }),

    check: () =>
      wrap(async () => {
        await redis.ping();
      }),

    // The client is injected and closed by its owner.
    dispose: async () => {},
  };
}

function toRecord(meta: Record<string, string> | undefined, messages: string[] | undefined): TestRecord | null {
  if (meta === undefined || meta.correlationId === undefined) return null;
  return {
    correlationId: meta.correlationId,
    status: meta.status as TestStatus,
    input: JSON.parse(meta.input ?? 'null'),
    owner: meta.owner ? meta.owner : null,
    createdAt: Number(meta.createdAt),
    updatedAt: Number(meta.updatedAt),
    messages: (messages ?? []).map((item) => JSON.parse(item.slice(item.indexOf('\t') + 1)) as TestMessage),
  };
}
