/**
 * The lists of tests in Redis: one sorted set of every test and one per owner, each scored by the
 * test's `createdAt`, for `list`. A test's own keys stay the truth (redis-result-log.ts); an index
 * is a superset of what it lists: an entry is added (if absent) in the same pipeline as, and
 * before, the script that writes its test, so no test is ever written unlisted, and an entry whose
 * test has expired or been removed is dropped when a read comes across it.
 *
 * Each index key expires a little after the last of its tests: whenever one of its tests is
 * created or written to, its TTL is set to the tests' TTL plus a margin of a tenth of it, at most
 * once per margin per process (a write inside the margin is covered by the previous refresh), so
 * a busy owner costs one EXPIRE per margin, not one per write, and an index whose tests are all
 * gone goes too.
 *
 * The index keys carry no hash tag: every command here names one key, and the scripts never touch
 * them, so on Redis Cluster they may live in any slot. Commands that a step sends together are
 * sent as separate commands, which ioredis' auto-pipelining puts in one round trip per node; on
 * Redis Cluster an entry and its test's write land on different shards, each awaited before the
 * append counts as stored (ARCHITECTURE.md, "The shared state on Redis Cluster").
 *   {prefix}:tests:all            sorted set  correlation id, scored by createdAt
 *   {prefix}:tests:owner:<owner>  sorted set  the same, for the tests that subject started
 *
 * A read of a page costs one ZRANGE, two light reads per listed test (HMGET of four meta fields,
 * LLEN; pipelined) to order, filter and count them, and one HMGET per test of the page for its
 * input and owner: never a test's messages.
 */
import { statusOf } from '../domain/status.js';
import type { TestListPage, TestStatus, TestSummary } from '../domain/types.js';
import type { RedisClient } from './redis-pubsub.js';
import type { ListOptions } from './result-log.js';
import { selectPage, toListPage, type PageCandidate } from './test-page.js';

/** Options of {@link createRedisTestIndex}. */
export interface RedisTestIndexOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly ttlSeconds: number;
  /** The keys of a test (redis-result-log.ts). */
  readonly keysOf: (correlationId: string) => { readonly meta: string; readonly msgs: string };
}

/** The test lists of one Redis log. */
export interface RedisTestIndex {
  /**
   * Sends (before the script that writes them) the entries of tests about to be written, scored
   * `createdAt` where they are new: in every test's list, and in its owner's. Resolves once stored.
   */
  stage(tests: ReadonlyArray<{ readonly correlationId: string; readonly owner: string | null }>, createdAt: number): Promise<void>;
  /** Pushes back the expiry of every test's list and of these owners' lists (when due). */
  refresh(owners: Iterable<string>): Promise<void>;
  list(options: ListOptions): Promise<TestListPage>;
}

/** Tests read per pipeline while ordering and counting a list. */
const CHUNK = 500;

interface Candidate extends PageCandidate {
  readonly updatedAt: number;
  readonly messageCount: number;
}

/** Creates the index over `redis`. */
export function createRedisTestIndex(options: RedisTestIndexOptions): RedisTestIndex {
  const { redis, ttlSeconds, keysOf } = options;
  const all = `${options.prefix}:tests:all`;
  const ofOwner = (owner: string) => `${options.prefix}:tests:owner:${owner}`;
  const marginSeconds = Math.max(1, Math.ceil(ttlSeconds / 10));
  // Index key -> when this process last pushed its expiry back.
  const refreshed = new Map<string, number>();

  /**
   * The live tests of `key` with what ordering and filtering need; drops the entries of gone ones,
   * and, from an owner's list, of tests that are not that owner's (an entry is queued before its
   * script runs, and `create` keeps a test that is there already, whoever started it).
   */
  async function candidates(key: string, owner: string | undefined): Promise<Candidate[]> {
    const ids = await redis.zrange(key, 0, '-1');
    const found: Candidate[] = [];
    const gone: string[] = [];
    for (let from = 0; from < ids.length; from += CHUNK) {
      const chunk = ids.slice(from, from + CHUNK);
      const replies = await Promise.all(chunk.map((id) => Promise.all([redis.hmget(keysOf(id).meta, 'createdAt', 'finishedAs', 'updatedAt', 'owner'), redis.llen(keysOf(id).msgs)])));
      chunk.forEach((correlationId, i) => {
        const [meta, count] = replies[i] as [Array<string | null>, number];
        const [createdAt, finishedAs, updatedAt, testOwner] = meta;
        if (createdAt === null || createdAt === undefined || (owner !== undefined && testOwner !== owner)) {
          gone.push(correlationId);
          return;
        }
        const messageCount = Number(count);
        found.push({
          correlationId,
          createdAt: Number(createdAt),
          updatedAt: Number(updatedAt ?? createdAt),
          messageCount,
          status: statusOf((finishedAs as TestStatus | null) ?? null, messageCount),
        });
      });
    }
    if (gone.length > 0) await redis.zrem(key, ...gone);
    return found;
  }

  return {
    async stage(tests, createdAt) {
      if (tests.length === 0) return;
      // One ZADD per list, however many tests: a list is one key.
      const members: Array<string | number> = [];
      const byOwner = new Map<string, Array<string | number>>();
      for (const { correlationId, owner } of tests) {
        members.push(createdAt, correlationId);
        if (owner === null) continue;
        const owned = byOwner.get(owner);
        if (owned === undefined) byOwner.set(owner, [createdAt, correlationId]);
        else owned.push(createdAt, correlationId);
      }
      await Promise.all([redis.zadd(all, 'NX', ...members), ...[...byOwner].map(([owner, owned]) => redis.zadd(ofOwner(owner), 'NX', ...owned))]);
    },

    async refresh(owners) {
      const now = Date.now();
      const due = [all, ...[...owners].map(ofOwner)].filter((key) => (refreshed.get(key) ?? -Infinity) <= now - marginSeconds * 1000);
      if (due.length === 0) return;
      await Promise.all(due.map((key) => redis.expire(key, ttlSeconds + marginSeconds)));
      // Bounded: forgetting only costs an early refresh.
      if (refreshed.size > 10_000) refreshed.clear();
      for (const key of due) refreshed.set(key, now);
    },

    async list(listOptions) {
      const { page, hasNextPage, totalCount } = selectPage(await candidates(listOptions.owner === undefined ? all : ofOwner(listOptions.owner), listOptions.owner), listOptions);
      if (page.length === 0) return toListPage([], hasNextPage, totalCount);
      const replies = await Promise.all(page.map((test) => redis.hmget(keysOf(test.correlationId).meta, 'input', 'owner')));
      const summaries = page.map((test, i): TestSummary => {
        const [input, owner] = replies[i] ?? [];
        return { ...test, input: JSON.parse(input ?? 'null') as unknown, owner: owner ? owner : null };
      });
      return toListPage(summaries, hasNextPage, totalCount);
    },
  };
}
