/**
 * The result log in Redis, shared by every replica. Appending is one Lua script call per batch
 * (or per test of the batch, for Redis Cluster; redis-append-script.ts): the deduplication check,
 * the append, the expiry refresh and the notice to followers happen atomically in Redis, so two
 * replicas or a redelivery can never store a message twice, and nothing is stored without being
 * announced. Followers read through per-test tails
 * (redis-tail.ts), which re-read after the last message they delivered whenever they may have
 * missed a notice.
 *
 * Keys per test, all under the hash tag `{<id>}` so that they live in one Redis Cluster slot (all
 * expire together, refreshed on every write):
 *   {prefix}:{id}:meta   hash  createdAt, updatedAt, input (JSON), owner, finishedAs (first finishing
 *                              status), order (whether arrival order is still the read order:
 *                              redis-append-script.ts, ORDER), run (the deduplication keys of
 *                              consecutive sequences, one field for all: redis-sequence-run.ts,
 *                              store format 2), and per other stored message
 *                              `~<deduplication key>` -> receivedAt of the stored copy (in the same
 *                              hash, so one read and one write per test and call cover both)
 *   {prefix}:{id}:msgs   list  stored messages (message-format.ts) in arrival order; readers order
 *                              them by sequence (src/domain/order.ts), and read a page as a range of
 *                              the list while `order` says it is in read order (redis-page-script.ts)
 *   {prefix}:{id}:notices      the channel of the test's notices
 * and for the whole log: the lists of tests (redis-test-index.ts), the channel of changes
 * `{prefix}:changes` (redis-changes.ts), and the version of all of it, `{prefix}:format`
 * (store-format.ts).
 */
import type { TestRecord } from '../domain/types.js';
import { disposeOnce } from '../process/disposable.js';
import type { Logger } from '../base/logger.js';
import { openFollower } from './follower.js';
import type { FollowSource } from './follower-types.js';
import { createFollowedTests } from './followed-tests.js';
import { createRedisAppend } from './redis-append.js';
import { createRedisReads } from './redis-reads.js';
import { createRedisNewTest } from './redis-new-test.js';
import { expiryCheckInterval, type NewTest, type ResultLog } from './result-log.js';
import { createRedisChanges } from './redis-changes.js';
import { createRedisChannels } from './redis-channels.js';
import { checkRedis } from '../redis/redis-health.js';
import { RECONNECT_WAIT_MS } from '../redis/redis-ready.js';
import { createRedisGuards, type Scripts } from './redis-guards.js';
import { redisTestKeys } from './redis-test-keys.js';
import { createRedisPubSub } from './redis-pubsub.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisTails } from './redis-tail.js';
import { createRedisTailReads } from './redis-tail-reads.js';
import { createRedisTestIndex, listRefresher } from './redis-test-index.js';
import { createUnreadableMessages } from './unreadable-messages.js';
import { createStoreFormat } from './store-format.js';
import { decodeTestCursor } from './test-page.js';

/** Options of {@link createRedisResultLog}. */
export interface RedisResultLogOptions {
  /**
   * The command connection (one node, or a Redis Cluster); the log does not own it and does not
   * close it. With ioredis' `enableAutoPipelining`, the commands a call sends together go in one
   * round trip per node.
   */
  readonly redis: RedisClient;
  /**
   * A connection of its own for the writes (the scripts that append and create, and their tests'
   * list entries), not closed by the log: by default `redis`. Give it one with `waitReplicas`: a
   * `WAIT` blocks its connection until the replicas answer or its timeout ends, and on the command
   * connection every read, tail read and readiness check sent meanwhile would wait behind it (a
   * primary without a live replica then held each read until its command timed out).
   */
  readonly writer?: RedisClient;
  /** A connection of its own for the notices (subscriber mode; on Redis Cluster with `shardedSubscribers`); not closed by the log either. */
  readonly subscriber: RedisClient;
  readonly ttlSeconds: number;
  /** How often followed tests are checked for having expired (default: a tenth of the TTL, between 1 s and 60 s). */
  readonly expiryCheckMs?: number;
  readonly maxMessagesPerTest: number;
  /** Key prefix, so several deployments can share one Redis. */
  readonly prefix?: string;
  /**
   * `per-batch` (the default on one node): one append script call per batch, naming the keys of
   * all its tests, which a single Redis primary allows. `per-test` (always on Redis Cluster): one
   * call per test of the batch, sent together, as Redis Cluster requires (a script's keys must
   * share a slot; a test's keys share a hash tag).
   */
  readonly scriptCalls?: 'per-batch' | 'per-test';
  /**
   * Replicas that must hold a write before an append or a create counts as stored (Redis `WAIT`,
   * sent after the script on the same node): with 1, a primary killed right after acknowledging a
   * write cannot take it with it when its replica is promoted, so the consumer never commits a
   * record the promoted replica lacks. 0 (the default) does not wait, as a single Redis needs.
   */
  readonly waitReplicas?: number;
  /** How long a write may wait for its replicas; fewer acknowledgements fail the write (it is retried). */
  readonly waitTimeoutMs?: number;
  readonly logger: Logger;
}

/** Creates the Redis {@link ResultLog}. */
export function createRedisResultLog(options: RedisResultLogOptions): ResultLog {
  const { redis, ttlSeconds, maxMessagesPerTest } = options;
  const writer = options.writer ?? redis;
  const callPerTest = options.scriptCalls === 'per-test' || redis.isCluster;
  const prefix = options.prefix ?? 'rcs';
  const keysOf = redisTestKeys(prefix);
  const log = options.logger.child({ component: 'redis-result-log' });
  const format = createStoreFormat({ redis, prefix });
  const unreadable = createUnreadableMessages(log);
  const onUnreadable = (id: string, position: number, reason: string) => unreadable.report(id, position, reason);
  const { run, sendBefore, wrap, onceReady, onceWritable, refreshOnRedirect } = createRedisGuards({
    redis,
    writer,
    format,
    waitReplicas: options.waitReplicas ?? 0,
    waitTimeoutMs: options.waitTimeoutMs ?? 1000,
  });
  const pubsub = createRedisPubSub(options.subscriber);
  const channels = createRedisChannels(prefix, redis.isCluster);
  const index = createRedisTestIndex({ redis, sendBefore, prefix, ttlSeconds, keysOf, onUnreadable });
  const changes = createRedisChanges({ pubsub, channels: channels.changeChannels, logger: options.logger });
  const refreshLists = listRefresher(index, log);
  const append = createRedisAppend({
    keysOf,
    channels,
    publishCommand: pubsub.publishCommand,
    run: (name, args) => run<Array<string | number>>(name, args),
    index,
    ttlSeconds,
    maxMessagesPerTest,
    callPerTest,
    format,
    logger: log,
  });

  const { readArrivals, summary, page } = createRedisReads({
    redis,
    keysOf,
    page: (k, first, field, start) => onceReady(() => (redis as unknown as Scripts).rcsPage(k.meta, k.msgs, first, field, start)),
    unreadable,
  });
  const read = async (correlationId: string): Promise<TestRecord | null> => (await readArrivals(correlationId)).record;
  const newTest = createRedisNewTest({
    keysOf,
    run: (args) => run<[string[], string[]]>('rcsCreate', args),
    index,
    refreshLists,
    changeChannelOf: (meta) => channels.changeChannelOf(meta),
    publishCommand: pubsub.publishCommand,
    ttlSeconds,
    unreadable,
    logger: log,
  });

  const tailReads = createRedisTailReads({
    redis,
    keysOf,
    readyWithinMs: RECONNECT_WAIT_MS,
    onError: (error) => refreshOnRedirect(error),
    onUnreadable,
  });
  const tails = createRedisTails({
    pubsub,
    ...(redis.isCluster ? { recheckMs: 2000 } : {}),
    expiryCheckMs: options.expiryCheckMs ?? expiryCheckInterval(ttlSeconds),
    channelOf: (id) => keysOf(id).channel,
    logger: options.logger,
    reads: tailReads,
  });

  // What followers read (through its one listener per followed test, followed-tests.ts). Its owner
  // first: a caller who may not see the test is refused before its messages are read.
  const followSource: FollowSource = {
    read: (id) =>
      onceReady(async () => {
        const { record, arrivals } = await readArrivals(id);
        return record === null ? null : { ...record, arrivals };
      }),
    owner: (id) => onceReady(() => summary(id)),
    listen: tails.listen,
    // After the first `passed` entries of the list, in arrival order; a place an unreadable entry holds is passed over.
    readFrom: (id, passed) =>
      onceReady(async () => {
        const entries = await tailReads.after(id, passed);
        if (entries.length === 0 && (await summary(id)) === null) return null;
        return entries.flatMap((entry, i) => ('unreadable' in entry ? [] : [{ message: entry, arrival: passed + i + 1 }]));
      }),
  };
  const followed = createFollowedTests(followSource);

  return {
    create: (test: NewTest) => onceWritable(() => newTest(test)),

    get: (correlationId) => onceReady(() => read(correlationId)),

    getMany: (correlationIds) =>
      onceReady(async () => {
        if (correlationIds.length === 0) return [];
        // Sent together: every test's MULTI goes out at once, to the node of its slot.
        return Promise.all(correlationIds.map((id) => summary(id)));
      }),

    messages: page,

    // The consumer's writes wait too: its own retries back off to 5 s apart (partition-lane.ts),
    // so a write that waits for the connection's return stores the chunk seconds sooner; a second
    // more before it hears of a revocation is nothing beside a session timeout.
    append: (batch) => onceWritable(() => append(batch)),

    list: async (listOptions) => {
      // A bad cursor is the caller's mistake, not the store's: checked before any Redis call.
      if (listOptions.after !== null && listOptions.after !== undefined) decodeTestCursor(listOptions.after);
      return onceReady(() => index.list(listOptions));
    },

    changes: (changeOptions) => changes.open(changeOptions),
    watchChanges: (listener) => changes.watch(listener),

    follow: (correlationId, followOptions) => openFollower(followSource, correlationId, followOptions, followed),

    followers: (correlationId) => followed.count(correlationId),

    changeSubscribers: () => changes.clients(),

    unreadableMessages: () => unreadable.count(),

    changeDelivery: () => changes.delivery(),

    remove: (correlationId) =>
      onceReady(async () => {
        const k = keysOf(correlationId);
        // `:keys`: earlier versions' deduplication keys (gone within a TTL of an upgrade). This process's response cache forgets the test.
        return (await redis.del(k.meta, k.msgs, k.keys).finally(() => changes.touched(correlationId))) > 0;
      }),

    // Never waits for a reconnecting connection (redis-health.ts: every connection ready, every
    // primary answering), then a stored format this release knows (store-format.ts).
    check: () =>
      wrap(async () => {
        await checkRedis(redis, { subscriber: options.subscriber, writer });
        await format.check();
      }),

    // The connections are injected and closed by their owner.
    dispose: disposeOnce(async () => {
      tails.dispose();
      changes.dispose();
    }),
  };
}
