/**
 * The tails of the Redis log (src/log/redis-tail.ts) through the faults a failover brings, on each
 * Redis shape, over connections opened the way the service opens them:
 * - a catch-up read that fails (the command connection not back yet when the subscriber is) is
 *   retried until it succeeds, though no later notice comes;
 * - a list shorter than what the tail delivered or started at (a replica promoted without the last writes,
 *   simulated by trimming the list and dropping the lost messages' deduplication keys in Redis, as
 *   the promoted replica would lack both) does not make the tail skip what is stored after it, and
 *   a lost message the consumer stores again reaches only the followers that lack it;
 * - a follower paused through the loss (its target full), alone or out of its group, catches up
 *   from where the list now ends, and is given a lost message stored again only if it lacked it;
 *   so is one whose snapshot was out when the failover was told, read before the loss or after;
 * - a follower that catches up from the store while the tail's read is out is not given twice
 *   what the tail then delivers late.
 */
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, TestMessage, TestRecord } from '../../src/domain/types.js';
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

/**
 * A follower pushed to a target that does not share: its live messages come to it alone. It says it
 * is full once it holds `room` messages (then `resume` makes room for all that come).
 */
function pushAlone(follower: AsyncIterableIterator<TestMessage>, room = Infinity): Followed & { resume(): void } {
  if (!isFollower(follower)) throw new Error('follow answered no Follower');
  const received: TestMessage[] = [];
  let ended = false;
  let left = room;
  follower.push({
    deliver: (message: TestMessage) => (received.push(message), (left -= 1) > 0),
    end: () => (ended = true),
    fail: () => (ended = true),
  });
  return { received, ended: () => ended, resume: () => ((left = Infinity), follower.resume()) };
}

/** The two ways a pushed follower is given its live messages: alone, or by its test's group. */
const PUSHED = [
  ['alone', pushAlone],
  ['in its group', share],
] as const;

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

  /**
   * What a promoted replica lacks after the primary died with `lost` unreplicated: the messages and
   * their deduplication keys, held in fields or in the test's run of sequences (redis-sequence-run.ts).
   */
  async function loseLastWrites(id: string, lost: readonly IncomingMessage[]): Promise<void> {
    const k = keysOf(id);
    const length = (await redis.llen(k.msgs)) - lost.length;
    await redis.ltrim(k.msgs, 0, length - 1);
    await redis.hdel(k.meta, ...lost.map((message) => dedupeField(message.key)));
    const run = await redis.hget(k.meta, 'run');
    if (run === null) return;
    const [from = 0, to = 0, high = -1] = run.split(':').map(Number);
    await redis.hset(k.meta, 'run', `${from}:${Math.min(to, from + length)}:${high}`);
  }

  /** A follower's source over `tails`, reading its snapshot with `read` and its catch-ups from the store directly. */
  function sourceOver(tails: RedisTails, read: (id: string) => Promise<TestRecord | null> = (id) => log.get(id)) {
    const direct = createRedisTailReads({ redis, keysOf });
    return {
      read,
      listen: tails.listen,
      readFrom: async (correlationId: string, passed: number) =>
        (await direct.after(correlationId, passed)).flatMap((entry, i) => ('unreadable' in entry ? [] : [{ message: entry, arrival: passed + i + 1 }])),
    };
  }

  it('delivers every message and completes when a catch-up read fails once and no later notice comes', async () => {
    const id = uniqueId('read-fails');
    await log.create({ correlationId: id, input: null, owner: null });
    let failures = 0;
    const tails = await tailsReadingThrough((reads) => ({
      head: (correlationId, keys) => reads.head(correlationId, keys),
      exists: (correlationId) => reads.exists(correlationId),
      after: async (correlationId, from) => {
        // The first catch-up: the subscriber connection brought the notice, the command connection is not back yet.
        if (failures++ === 0) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
        return reads.after(correlationId, from);
      },
    }));
    const followed = consume(await openFollower(sourceOver(tails), id, { queueLimit: 100 }));
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

  it('recognises a failover that lost writes before its tail delivered anything: what is stored after is not missed, what was lost not given twice', async () => {
    const id = uniqueId('lost-at-start');
    const message = (sequence: number, final = false) => incoming(id, { sequence, final });
    await log.create({ correlationId: id, input: null, owner: null });
    await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
    // The first followers start the test's tail at 5 messages: 1 to 5 are in their snapshots.
    const followed = consume(await log.follow(id, { queueLimit: 100 }));
    const grouped = share(await log.follow(id, { queueLimit: 100 }));
    await eventually(() => followed.received.length === 5 && grouped.received.length === 5, 10_000, 'the replays');
    // The primary dies with 4 and 5 unreplicated before the tail read anything; 6 comes at place 4.
    await loseLastWrites(id, [message(4), message(5)]);
    await log.append([message(6)]);
    await eventually(() => followed.received.length === 6 && grouped.received.length === 6, 10_000, 'the message stored after the loss');
    // The consumer stores 4 and 5 again: both followers had them.
    await log.append([message(4), message(5)]);
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

  describe.each(PUSHED)('a follower pushed %s, paused (full) when a failover loses writes', (_how, push) => {
    /**
     * A test given 1 to 5, followed by `push` (full once it holds `room` messages, paused then) and
     * by a pulled follower that watches it live; then the primary dies with 4 and 5 unreplicated,
     * and 6 comes, at place 4.
     */
    async function pausedAcrossALoss(name: string, room: number) {
      const id = uniqueId(name);
      const message = (sequence: number, final = false) => incoming(id, { sequence, final });
      await log.create({ correlationId: id, input: null, owner: null });
      const paused = push(await log.follow(id, { queueLimit: 100 }), room);
      const watching = consume(await log.follow(id, { queueLimit: 100 }));
      await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
      await eventually(() => paused.received.length === room && watching.received.length === 5, 10_000, 'the first messages');
      await loseLastWrites(id, [message(4), message(5)]);
      await log.append([message(6)]);
      await eventually(() => watching.received.length === 6, 10_000, 'the message stored after the loss');
      return { message, paused, watching };
    }

    it('catches up from where the list now ends: the messages numbered again are not missed', async () => {
      // Full with 5; what comes is numbered from where the list now ends (6 at place 4, 7 at
      // place 5): no place past the paused one's.
      const { message, paused, watching } = await pausedAcrossALoss('paused-shortened', 5);
      await log.append([message(7, true)]);
      await eventually(() => watching.ended(), 10_000, 'the live follower to end after the final message');
      paused.resume();
      await eventually(() => paused.ended(), 10_000, 'the paused follower to end after the final message');
      expect(sequences(paused)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });

    it('is not given again a message it had that the failover lost and the consumer stored again', async () => {
      // Full with 5; the consumer stores 4 and 5 again (places 5 and 6) while it is paused.
      const { message, paused, watching } = await pausedAcrossALoss('paused-lost-again', 5);
      await log.append([message(4), message(5)]);
      await log.append([message(7, true)]);
      await eventually(() => watching.ended(), 10_000, 'the live follower to end after the final message');
      paused.resume();
      await eventually(() => paused.ended(), 10_000, 'the paused follower to end after the final message');
      expect(sequences(paused)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(sequences(watching)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });

    it('is given a lost message stored again that it had not been given when it paused', async () => {
      // Full with 3: 4 and 5 reached only the live follower before the failover lost them.
      const { message, paused, watching } = await pausedAcrossALoss('paused-lacked', 3);
      paused.resume();
      await eventually(() => paused.received.length === 4, 10_000, 'the paused follower to catch up');
      // Stored again once it is live: it never had them.
      await log.append([message(4), message(5)]);
      await log.append([message(7, true)]);
      await eventually(() => paused.ended() && watching.ended(), 10_000, 'both followers to end after the final message');
      expect(sequences(paused)).toEqual([1, 2, 3, 6, 4, 5, 7]);
      expect(sequences(watching)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });

  describe.each(PUSHED)('a follower pushed %s that catches up from the store while its tail lags', (_how, push) => {
    it('is not given again what its catch-up read gave it, when the tail delivers it late', async () => {
      const id = uniqueId('tail-lags');
      const message = (sequence: number, final = false) => incoming(id, { sequence, final });
      await log.create({ correlationId: id, input: null, owner: null });
      await log.append([1, 2, 3].map((sequence) => message(sequence)));
      // The tail's reads wait while `held` is set: its notice has come, its read has not returned.
      let held: Promise<void> | undefined;
      let release = () => {};
      let waiting = 0;
      const tails = await tailsReadingThrough((reads) => ({
        head: (correlationId, keys) => reads.head(correlationId, keys),
        exists: (correlationId) => reads.exists(correlationId),
        after: async (correlationId, from) => {
          if (held !== undefined) {
            waiting += 1;
            await held;
          }
          return reads.after(correlationId, from);
        },
      }));
      // Full with its first message: paused in its replay.
      const pushed = push(await openFollower(sourceOver(tails), id, { queueLimit: 100 }), 1);
      expect(sequences(pushed)).toEqual([1]);
      held = new Promise((resolve) => (release = resolve));
      await log.append([message(4), message(5)]);
      await eventually(() => waiting > 0, 10_000, 'the tail to read after the notice');
      // Its catch-up reads 4 and 5 from the store while the tail's read is out.
      pushed.resume();
      await eventually(() => pushed.received.length === 5, 10_000, 'the catch-up');
      held = undefined;
      release();
      await log.append([message(6, true)]);
      await eventually(() => pushed.ended(), 10_000, 'the follower to end after the final message');
      expect(sequences(pushed)).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('a follower that reads its snapshot while a failover that lost writes is told', () => {
    /**
     * A test given 1 to 5, a follower watching it live, and one whose snapshot is read by `read`
     * and handed over only once `release` is called; the primary dies with 4 and 5 unreplicated, 6
     * comes at place 4 (so the tail tells the failover) while that snapshot is out.
     */
    async function snapshotAcrossALoss(name: string, read: (id: string, released: Promise<void>) => Promise<TestRecord | null>) {
      const id = uniqueId(name);
      const message = (sequence: number, final = false) => incoming(id, { sequence, final });
      await log.create({ correlationId: id, input: null, owner: null });
      const tails = await tailsReadingThrough((reads) => reads);
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      // Listening before 1 to 5 are stored: the tail delivers them, and so knows their keys.
      const watching = consume(await openFollower(sourceOver(tails), id, { queueLimit: 100 }));
      await log.append([1, 2, 3, 4, 5].map((sequence) => message(sequence)));
      await eventually(() => watching.received.length === 5, 10_000, 'the watching follower to have 1 to 5');
      const opening = openFollower(
        sourceOver(tails, (testId) => read(testId, released)),
        id,
        { queueLimit: 100 },
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await loseLastWrites(id, [message(4), message(5)]);
      await log.append([message(6)]);
      await eventually(() => watching.received.length === 6, 10_000, 'the message stored after the loss');
      release();
      const reading = consume(await opening);
      // The consumer stores the lost ones again, then the last.
      await log.append([message(4), message(5)]);
      await log.append([message(7, true)]);
      await eventually(() => reading.ended() && watching.ended(), 10_000, 'both followers to end after the final message');
      expect(sequences(watching)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      return sequences(reading);
    }

    it('is given the lost messages stored again when its snapshot was read after the loss', async () => {
      const got = await snapshotAcrossALoss('snapshot-after-loss', async (id, released) => (await released, log.get(id)));
      expect(got).toEqual([1, 2, 3, 6, 4, 5, 7]);
    });

    it('is given neither twice nor too few when its snapshot was read before the loss', async () => {
      const got = await snapshotAcrossALoss('snapshot-before-loss', async (id, released) => {
        const record = await log.get(id);
        await released;
        return record;
      });
      expect(got).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });

  it('sends a lost message stored again only to the followers that lack it: those that came after the loss', async () => {
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
