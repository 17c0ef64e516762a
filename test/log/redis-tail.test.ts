/**
 * The tails of the Redis log (src/log/redis-tail.ts) through the faults a failover brings, on each
 * Redis shape, over connections opened the way the service opens them:
 * - a catch-up read that fails (the command connection not back yet when the subscriber is) is
 *   retried until it succeeds, though no later notice comes;
 * - a list shorter than what the tail delivered (a replica promoted without the last writes,
 *   simulated by trimming the list and dropping the lost messages' deduplication keys in Redis, as
 *   the promoted replica would lack both) does not make the tail skip what is stored after it, and
 *   a lost message the consumer stores again reaches only the followers that lack it.
 */
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, TestMessage } from '../../src/domain/types.js';
import { isFollower, openFollower } from '../../src/log/follower.js';
import { dedupeField } from '../../src/log/redis-record.js';
import { createRedisPubSub } from '../../src/log/redis-pubsub.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import { createRedisTailReads } from '../../src/log/redis-tail-reads.js';
import { redisTestKeys } from '../../src/log/redis-test-keys.js';
import { createRedisTails, type RedisTails } from '../../src/log/redis-tail.js';
import type { TailReads } from '../../src/log/redis-tail-catch-up.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { eventually } from '../support/graphql.js';
import { openRedisShape, REDIS_SHAPES, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';
import { incoming, uniqueId } from './storage-contract.js';

const prefix = `rcs-tail-${process.pid}-${Date.now()}`;
const keysOf = redisTestKeys(prefix);

/** A follower read into an array as its messages come. */
interface Followed {
  readonly received: TestMessage[];
  readonly ended: () => boolean;
}
function consume(iterator: AsyncIterableIterator<TestMessage>): Followed {
  const received: TestMessage[] = [];
  let ended = false;
  void (async () => {
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) received.push(next.value);
    ended = true;
  })();
  return { received, ended: () => ended };
}
const sequences = (followed: Followed) => followed.received.map((m) => m.sequence);

/**
 * A follower pushed to a target that shares (the hub's way): once live, its messages come from its
 * test's group. It takes every message, and says it is full once it holds `room` of them (then
 * `resume` makes room for all that come).
 */
function share(follower: AsyncIterableIterator<TestMessage>, room = Infinity): Followed & { readonly grouped: () => number; resume(): void } {
  if (!isFollower(follower)) throw new Error('follow answered no Follower');
  const received: TestMessage[] = [];
  let ended = false;
  let grouped = 0;
  let left = room;
  const fits = () => (left -= 1) > 0;
  follower.push({
    shareKey: 'op',
    deliver: (message: TestMessage) => (received.push(message), fits()),
    prepare: (message: TestMessage) => message,
    take: (message: unknown) => (received.push(message as TestMessage), (grouped += 1), fits()),
    end: () => (ended = true),
    fail: () => (ended = true),
  } as Parameters<typeof follower.push>[0]);
  return {
    received,
    ended: () => ended,
    grouped: () => grouped,
    resume: () => ((left = Infinity), follower.resume()),
  };
}

afterAll(stopRedisShapes, 60_000);

describe.each(REDIS_SHAPES)('the tails of the Redis log on Redis %s', (shapeName) => {
  let shape: RedisShape;
  let redis: RedisClient;
  let log: ResultLog;
  const open: Array<{ dispose(): unknown }> = [];

  beforeAll(async () => {
    shape = await openRedisShape(shapeName);
    redis = await shape.connect('commands');
    const subscriber = await shape.connect(`tail-subscriber-${process.pid}`, { subscriber: true });
    // As deployed: with replicas, a write counts once one holds it.
    log = createRedisResultLog({
      redis,
      subscriber,
      prefix,
      logger: createSilentLogger(),
      ttlSeconds: 600,
      maxMessagesPerTest: 1000,
      waitReplicas: shapeName === 'standalone' ? 0 : 1,
    });
    open.push(log);
  }, 90_000);

  afterAll(async () => {
    for (const part of open) await part.dispose();
    for await (const keys of scan(redis)) if (keys.length > 0) await Promise.all(keys.map((key) => redis.del(key)));
    await shape?.close();
  });

  /** Tails of their own over the log's keys, on a subscriber of their own, reading through `reads`. */
  async function tailsReadingThrough(wrap: (reads: TailReads) => TailReads): Promise<RedisTails> {
    const subscriber = await shape.connect(`tail-own-${process.pid}-${open.length}`, { subscriber: true });
    const tails = createRedisTails({
      pubsub: createRedisPubSub(subscriber),
      channelOf: (id) => keysOf(id).channel,
      reads: wrap(createRedisTailReads({ redis, keysOf })),
      logger: createSilentLogger(),
    });
    open.push(tails);
    return tails;
  }

  /** What a promoted replica lacks after the primary died with `lost` unreplicated: the messages and their deduplication keys. */
  async function loseLastWrites(id: string, lost: readonly IncomingMessage[]): Promise<void> {
    const k = keysOf(id);
    const length = await redis.llen(k.msgs);
    await redis.ltrim(k.msgs, 0, length - lost.length - 1);
    await redis.hdel(k.meta, ...lost.map((message) => dedupeField(message.key)));
  }

  it('delivers every message and completes when a catch-up read fails once and no later notice comes', async () => {
    const id = uniqueId('read-fails');
    await log.create({ correlationId: id, input: null, owner: null });
    let failures = 0;
    const tails = await tailsReadingThrough((reads) => ({
      head: (correlationId) => reads.head(correlationId),
      exists: (correlationId) => reads.exists(correlationId),
      after: async (correlationId, from) => {
        // The first catch-up: the subscriber connection brought the notice, the command connection is not back yet.
        if (failures++ === 0) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
        return reads.after(correlationId, from);
      },
    }));
    const followed = consume(
      await openFollower({ read: (correlationId) => log.get(correlationId), listen: tails.listen, readFrom: async () => [] }, id, { queueLimit: 100 }),
    );
    // One write, so one notice: nothing else will make the tail read again.
    await log.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 }), incoming(id, { sequence: 3, final: true })]);
    await eventually(() => followed.ended(), 10_000, 'the follower to end after the final message');
    expect(sequences(followed)).toEqual([1, 2, 3]);
    expect(failures).toBeGreaterThan(1);
  });

  it('goes on from the end of a list a failover shortened, delivering what is stored after it once', async () => {
    const id = uniqueId('shortened');
    const message = (sequence: number, final = false) => incoming(id, { sequence, final });
    await log.create({ correlationId: id, input: null, owner: null });
    const followed = consume(await log.follow(id, { queueLimit: 100 }));
    const grouped = share(await log.follow(id, { queueLimit: 100 }));
    await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
    await eventually(() => followed.received.length === 5 && grouped.received.length === 5, 10_000, 'the first five messages');
    expect(grouped.grouped()).toBe(5);

    // The primary dies with 4 and 5 unreplicated; the consumer stores 4 again (it had not
    // committed it) with a new result, 6: the list is as long as before, and holds 6 where 5 was.
    await loseLastWrites(id, [message(4), message(5)]);
    await log.append([message(4), message(6)]);
    await log.append([message(7, true)]);
    await eventually(() => followed.ended() && grouped.ended(), 10_000, 'the followers to end after the final message');
    expect(sequences(followed)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sequences(grouped)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('catches a grouped follower up from the place its group reached, when it filled up at a message numbered again after a failover', async () => {
    const id = uniqueId('full-after-loss');
    const message = (sequence: number, final = false) => incoming(id, { sequence, final });
    await log.create({ correlationId: id, input: null, owner: null });
    await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
    // Joins with 5 passed; 6 and 7 reach it through its group; it is full with the next message.
    const grouped = share(await log.follow(id, { queueLimit: 100 }), 8);
    await log.append([message(6), message(7)]);
    await eventually(() => grouped.received.length === 7, 10_000, 'the first seven messages');
    expect(grouped.grouped()).toBe(2);
    // The primary dies with 6 and 7 unreplicated; new results come, numbered from where the list now ends.
    await loseLastWrites(id, [message(6), message(7)]);
    await log.append([message(8)]);
    await eventually(() => grouped.received.length === 8, 10_000, 'the message it filled up at');
    await log.append([message(9)]);
    await log.append([message(10), message(11, true)]);
    // 9 was stored while it was full, at place 7: the place it had passed before the failover.
    grouped.resume();
    await eventually(() => grouped.ended(), 10_000, 'the follower to end after the final message');
    expect(sequences(grouped)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('sends a lost message stored again only to the followers that came after the loss', async () => {
    const id = uniqueId('lost-again');
    const message = (sequence: number, final = false) => incoming(id, { sequence, final });
    await log.create({ correlationId: id, input: null, owner: null });
    const before = consume(await log.follow(id, { queueLimit: 100 }));
    const beforeGrouped = share(await log.follow(id, { queueLimit: 100 }));
    await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
    await eventually(() => before.received.length === 5 && beforeGrouped.received.length === 5, 10_000, 'the first five messages');

    // 4 and 5 are lost; a new result, 6, comes before the consumer stores them again: the list is
    // shorter than what was delivered, and its notice's count smaller than the last one.
    await loseLastWrites(id, [message(4), message(5)]);
    await log.append([message(6)]);
    await eventually(() => before.received.length === 6 && beforeGrouped.received.length === 6, 10_000, 'the message stored after the loss');
    // A follower that comes now reads a list without 4 and 5.
    const after = consume(await log.follow(id, { queueLimit: 100 }));
    const afterGrouped = share(await log.follow(id, { queueLimit: 100 }));
    await eventually(() => after.received.length === 4 && afterGrouped.received.length === 4, 10_000, 'the replay of the later followers');

    await log.append([message(4), message(5)]);
    await log.append([message(7, true)]);
    const all = [before, beforeGrouped, after, afterGrouped];
    await eventually(() => all.every((f) => f.ended()), 10_000, 'every follower to end after the final message');
    expect(sequences(before)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sequences(beforeGrouped)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sequences(after)).toEqual([1, 2, 3, 6, 4, 5, 7]);
    expect(sequences(afterGrouped)).toEqual([1, 2, 3, 6, 4, 5, 7]);
    expect(beforeGrouped.grouped() + afterGrouped.grouped()).toBeGreaterThan(0);
  });
});

/** The keys of this file, on every primary of a cluster or on the one node. */
async function* scan(redis: RedisClient): AsyncGenerator<string[]> {
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  for (const node of nodes) yield* node.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<string[]>;
}
