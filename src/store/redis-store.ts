/**
 * Shared state in Redis, so that every replica reads and writes the same tests. Appending is one
 * Lua script: the deduplication check, the ordered insert, the status change and the expiry
 * refresh happen atomically in Redis, so two replicas or a redelivery can never store a message
 * twice. Reads of many tests are one pipeline.
 *
 * Keys per test (all expire together, refreshed on every write):
 *   {prefix}:{id}:meta   hash  correlationId, status, input (JSON), owner, createdAt, updatedAt
 *   {prefix}:{id}:msgs   list  messages in order, each `<sequence or empty>\t<JSON>`: the script
 *                              orders by the prefix and never decodes a payload
 *   {prefix}:{id}:keys   hash  deduplication key -> receivedAt of the stored copy
 * The `{id}` hash tag keeps one test's keys in one Redis Cluster slot.
 */
import type { Redis } from 'ioredis';
import type { AppendResult, IncomingMessage, TestMessage, TestRecord, TestStatus } from '../domain/types.js';
import { ServiceError } from '../errors.js';
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

// KEYS: meta, msgs, keys. ARGV: correlationId, dedupeKey, sequence ('' for none), status ('' for
// none), final ('1'/'0'), message JSON without receivedAt (ends in '}'), now, ttl, max, channel
// prefix to publish the new message on ('' for none).
// Returns { outcome, status, receivedAt }.
const APPEND = `
local meta, msgs, keys = KEYS[1], KEYS[2], KEYS[3]
local id, key, seq, mstatus, final = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local body, now, ttl, max, channel = ARGV[6], ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10]
if redis.call('EXISTS', meta) == 0 then
  redis.call('HSET', meta, 'correlationId', id, 'status', 'PENDING', 'input', 'null', 'owner', '', 'createdAt', now, 'updatedAt', now)
end
local status = redis.call('HGET', meta, 'status')
local earlier = redis.call('HGET', keys, key)
if earlier then return { 'duplicate', status, earlier } end
if redis.call('LLEN', msgs) >= max then return { 'over-limit', status, now } end
local message = string.sub(body, 1, -2) .. ',"receivedAt":' .. now .. '}'
local json = seq .. '\t' .. message
-- Ordered by sequence where given, else by arrival: a sequenced message goes after the last one
-- whose sequence is not greater, never before an unsequenced one.
local len = redis.call('LLEN', msgs)
local index = len
if seq ~= '' then
  local s = tonumber(seq)
  while index > 0 do
    local before = string.match(redis.call('LINDEX', msgs, index - 1), '^([^\t]*)\t')
    if before == nil or before == '' or tonumber(before) <= s then break end
    index = index - 1
  end
end
if index == len then
  redis.call('RPUSH', msgs, json)
else
  redis.call('LINSERT', msgs, 'BEFORE', redis.call('LINDEX', msgs, index), json)
end
redis.call('HSET', keys, key, now)
if status ~= 'COMPLETED' and status ~= 'FAILED' then
  if mstatus == 'COMPLETED' or mstatus == 'FAILED' then status = mstatus
  elseif final == '1' then status = 'COMPLETED'
  else status = 'RUNNING' end
end
redis.call('HSET', meta, 'status', status, 'updatedAt', now)
redis.call('EXPIRE', meta, ttl)
redis.call('EXPIRE', msgs, ttl)
redis.call('EXPIRE', keys, ttl)
if channel ~= '' then
  redis.call('PUBLISH', channel .. id, '{"message":' .. message .. ',"status":"' .. status .. '"}')
end
return { 'inserted', status, now }
`;

/** Creates the Redis {@link Store}. */
export function createRedisStore(options: RedisStoreOptions): Store {
  const { redis, ttlSeconds } = options;
  const prefix = options.prefix ?? 'rcs';
  const keysOf = (id: string) => {
    const base = `${prefix}:{${id}}`;
    return { meta: `${base}:meta`, msgs: `${base}:msgs`, keys: `${base}:keys` } as const;
  };

  // ioredis sends EVALSHA and falls back to EVAL when the script is not cached (after a restart).
  redis.defineCommand('rcsAppend', { numberOfKeys: 3, lua: APPEND });
  const append = (redis as unknown as { rcsAppend(...args: Array<string | number>): Promise<[string, string, string]> }).rcsAppend.bind(redis);

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

    append: (incoming: IncomingMessage) =>
      wrap(async (): Promise<AppendResult> => {
        const k = keysOf(incoming.correlationId);
        const { correlationId, key, messageId, sequence, status, final, payload, producedAt } = incoming;
        const body = JSON.stringify({ correlationId, key, messageId, sequence, status, final, payload, producedAt });
        const [outcome, after, receivedAt] = await append(
          k.meta,
          k.msgs,
          k.keys,
          correlationId,
          key,
          sequence === null ? '' : String(sequence),
          status ?? '',
          final ? '1' : '0',
          body,
          Date.now(),
          ttlSeconds,
          options.maxMessagesPerTest,
          options.publishPrefix ?? '',
        );
        const message: TestMessage = { ...incoming, receivedAt: Number(receivedAt) };
        const published = outcome === 'inserted' && options.publishPrefix !== undefined;
        return { outcome: outcome as AppendResult['outcome'], status: after as TestStatus, message, ...(published ? { published } : {}) };
      }),

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
