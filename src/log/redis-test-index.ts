/**
 * The lists of tests in Redis: one sorted set of every test and one per owner, each scored by the
 * test's `createdAt`, for `list`. A test's own keys stay the truth (redis-result-log.ts); an index
 * is a superset of what it lists: an entry is added (if absent) with the script that writes its
 * test, and the write counts as stored only once both are (a failed one is retried, entry and
 * all), and an entry whose test has expired or been removed is dropped when a read comes across it.
 * On one node the entry goes before the script on the same connection (in the same round trip
 * without `WAIT`); with `WAIT` the entries go with a `WAIT` of their own (redis-guards.ts
 * `sendBefore`), so a failover that keeps a test keeps its entries.
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
 * A page is read in the set's own order (score, then member, both descending): one ZRANGE of the
 * page's entries after the cursor (and one of the entries tied with the cursor's `createdAt`), a
 * ZCARD for the total, and one summary read per test of the page (HMGET of the meta fields, LLEN;
 * pipelined): never a test's messages, never the rest of the list. The total is the set's size
 * less the gone entries the read came across, so it may still count tests that expired since,
 * until reads drop them: each read also checks up to {@link SWEEP} entries old enough to have
 * expired, oldest first, where the previous read of this process stopped. A status filter needs
 * each test's status: it reads the summaries of the list's newest {@link FILTER_WINDOW} entries
 * (two light reads each) and pages and counts among them alone.
 */
import { statusOf } from '../domain/status.js';
import type { TestListPage, TestStatus, TestSummary } from '../domain/types.js';
import type { Logger } from '../base/logger.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { ListOptions } from './result-log.js';
import { INPUT_POSITION, readStoredInput } from './message-format.js';
import { compareIds, decodeTestCursor, encodeTestCursor, selectPage, toListPage, type PageCandidate } from './test-page.js';
import type { RedisTestKeys } from './redis-test-keys.js';
import type { RedisCommand } from './redis-guards.js';

/** Options of {@link createRedisTestIndex}. */
export interface RedisTestIndexOptions {
  readonly redis: RedisClient;
  /**
   * How {@link RedisTestIndex.stage} sends its entries: before the script they go with, on its
   * connection, covered by a WAIT when the log waits for replicas (redis-guards.ts `sendBefore`).
   */
  readonly sendBefore: (commands: ReadonlyArray<RedisCommand>) => Promise<void>;
  readonly prefix: string;
  readonly ttlSeconds: number;
  /** The keys of a test (redis-result-log.ts). */
  readonly keysOf: (correlationId: string) => RedisTestKeys;
  /** Told of a listed test whose stored input cannot be served (it is listed with a null input). */
  readonly onUnreadable?: (correlationId: string, position: number, reason: string) => void;
}

/** The test lists of one Redis log. */
export interface RedisTestIndex {
  /**
   * Sends (before the script that writes them: call it first) the entries of tests about to be
   * written, scored `createdAt` where they are new: in every test's list, and in its owner's.
   * Resolves once stored, and held by the replicas the log waits for.
   */
  stage(tests: ReadonlyArray<{ readonly correlationId: string; readonly owner: string | null }>, createdAt: number): Promise<void>;
  /**
   * Moves the test's existing entries (every test's list, its owner's) to `createdAt`: a create
   * that fills in a test first seen through its results gives it the time of its start.
   */
  place(correlationId: string, owner: string | null, createdAt: number): Promise<void>;
  /** Pushes back the expiry of every test's list and of these owners' lists (when due). */
  refresh(owners: Iterable<string>): Promise<void>;
  list(options: ListOptions): Promise<TestListPage>;
}

/** Entries of a list a status filter looks through: its newest. */
export const FILTER_WINDOW = 1000;
/** Entries old enough to have expired that each read checks, beside those of its page. */
export const SWEEP = 100;
/**
 * How long an entry whose test is not there yet is kept: its test's script may still be on its way
 * (behind a WAIT on the writes' connection, on another shard, from another replica). Such an entry
 * is left out of the page and the count meanwhile, and dropped by a read once it is older.
 */
const SETTLE_MS = 30_000;

/** Tests read per pipeline while ordering and counting a list. */
const CHUNK = 500;

/** An entry of a list: a test and its score. */
interface Entry {
  readonly correlationId: string;
  readonly createdAt: number;
}

interface Candidate extends PageCandidate {
  readonly updatedAt: number;
  readonly messageCount: number;
  readonly owner: string | null;
  /** The input's JSON text, when it was read. */
  readonly input?: string | null;
}

/** Pushes the expiry of the lists of the given owners back; a failure only leaves it as it was (the next write retries). */
export function listRefresher(index: Pick<RedisTestIndex, 'refresh'>, logger: Logger): (owners: Iterable<string>) => Promise<void> {
  return (owners) => index.refresh(owners).catch((error: unknown) => logger.warn({ err: error }, 'could not refresh the expiry of the lists of tests'));
}

/** Creates the index over `redis`. */
export function createRedisTestIndex(options: RedisTestIndexOptions): RedisTestIndex {
  const { redis, ttlSeconds, keysOf } = options;
  const all = `${options.prefix}:tests:all`;
  const ofOwner = (owner: string) => `${options.prefix}:tests:owner:${owner}`;
  const marginSeconds = Math.max(1, Math.ceil(ttlSeconds / 10));
  // Index key -> when this process last pushed its expiry back.
  const refreshed = new Map<string, number>();
  // Index key -> where this process's next sweep of it starts (entries from the oldest).
  const swept = new Map<string, number>();

  /**
   * The live tests among `ids`, in their order, with what paging needs (and the input, when
   * asked); and the gone ones: expired or removed, and, in an owner's list, tests that are not that
   * owner's (an entry is queued before its script runs, and `create` keeps a test that is there
   * already, whoever started it).
   */
  async function inspect(ids: readonly string[], owner: string | undefined, withInput: boolean): Promise<{ found: Candidate[]; gone: string[] }> {
    const found: Candidate[] = [];
    const gone: string[] = [];
    const fields = withInput ? ['createdAt', 'finishedAs', 'updatedAt', 'owner', 'input'] : ['createdAt', 'finishedAs', 'updatedAt', 'owner'];
    for (let from = 0; from < ids.length; from += CHUNK) {
      const chunk = ids.slice(from, from + CHUNK);
      const replies = await Promise.all(chunk.map((id) => Promise.all([redis.hmget(keysOf(id).meta, ...fields), redis.llen(keysOf(id).msgs)])));
      chunk.forEach((correlationId, i) => {
        const [meta, count] = replies[i] as [Array<string | null>, number];
        const [createdAt, finishedAs, updatedAt, testOwner, input] = meta;
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
          owner: testOwner ? testOwner : null,
          ...(withInput ? { input: input ?? null } : {}),
        });
      });
    }
    return { found, gone };
  }

  /** A page without a status filter: read in the list's order, as far as the page (and one more) goes. */
  async function readPage(key: string, owner: string | undefined, listOptions: ListOptions): Promise<TestListPage> {
    const want = listOptions.first + 1;
    let place: Entry | null = listOptions.after === null || listOptions.after === undefined ? null : decodeTestCursor(listOptions.after);
    const total = redis.zcard(key);
    const live: Array<{ entry: Entry; test: Candidate }> = [];
    const gone: string[] = [];
    const scores = new Map<string, number>();
    for (let ask = want; ; ask = Math.min(CHUNK, ask * 2)) {
      const entries = await entriesAfter(redis, key, place, ask);
      const { found, gone: dropped } = await inspect(
        entries.map((entry) => entry.correlationId),
        owner,
        true,
      );
      const byId = new Map(found.map((test) => [test.correlationId, test]));
      for (const entry of entries) {
        scores.set(entry.correlationId, entry.createdAt);
        const test = byId.get(entry.correlationId);
        if (test !== undefined && live.length < want) live.push({ entry, test });
      }
      gone.push(...dropped);
      if (entries.length < ask || live.length >= want) break;
      place = entries.at(-1) as Entry;
    }
    await dropSettled(redis, key, gone, scores);
    const edges = live.slice(0, listOptions.first).map(({ entry, test }) => ({ cursor: encodeTestCursor(entry), node: toSummary(test, options.onUnreadable) }));
    return { edges, hasNextPage: live.length > listOptions.first, totalCount: Math.max(0, (await total) - gone.length) };
  }

  /** A page with a status filter: among the newest {@link FILTER_WINDOW} entries. */
  async function readFiltered(key: string, owner: string | undefined, listOptions: ListOptions): Promise<TestListPage> {
    const ids = await redis.zrange(key, '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, FILTER_WINDOW);
    const { found, gone } = await inspect(ids, owner, false);
    await dropSettled(redis, key, gone);
    const { page, hasNextPage, totalCount } = selectPage(found, listOptions);
    const inputs = await Promise.all(page.map((test) => redis.hget(keysOf(test.correlationId).meta, 'input')));
    return toListPage(
      page.map((test, i) => toSummary({ ...test, input: inputs[i] ?? null }, options.onUnreadable)),
      hasNextPage,
      totalCount,
    );
  }

  /**
   * Checks up to {@link SWEEP} entries of `key` old enough to have expired (a test lives at least
   * the TTL after its start), from where the previous sweep stopped, and drops the gone ones.
   */
  async function sweep(key: string, owner: string | undefined): Promise<void> {
    const offset = swept.get(key) ?? 0;
    const ids = await redis.zrange(key, '-inf', String(Date.now() - ttlSeconds * 1000), 'BYSCORE', 'LIMIT', offset, SWEEP);
    const { gone } = await inspect(ids, owner, false);
    if (gone.length > 0) await redis.zrem(key, ...gone);
    // Bounded: forgetting only restarts a sweep from the oldest entry.
    if (swept.size > 10_000) swept.clear();
    swept.set(key, ids.length < SWEEP ? 0 : offset + ids.length - gone.length);
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
      await options.sendBefore([
        ['zadd', all, 'NX', ...members],
        ...[...byOwner].map(([owner, owned]): RedisCommand => ['zadd', ofOwner(owner), 'NX', ...owned]),
      ]);
    },

    async place(correlationId, owner, createdAt) {
      await Promise.all([all, ...(owner === null ? [] : [ofOwner(owner)])].map((key) => redis.zadd(key, 'XX', createdAt, correlationId)));
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
      const key = listOptions.owner === undefined ? all : ofOwner(listOptions.owner);
      const filtered = listOptions.statuses !== null && listOptions.statuses !== undefined;
      if (filtered && listOptions.statuses?.length === 0) return { edges: [], hasNextPage: false, totalCount: 0 };
      const [page] = await Promise.all([
        filtered ? readFiltered(key, listOptions.owner, listOptions) : readPage(key, listOptions.owner, listOptions),
        sweep(key, listOptions.owner),
      ]);
      return page;
    },
  };
}

/** Removes the entries of `gone` (scored as `scores` says, else as the list does) that are older than {@link SETTLE_MS}. */
async function dropSettled(redis: RedisClient, key: string, gone: readonly string[], scores?: ReadonlyMap<string, number>): Promise<void> {
  if (gone.length === 0) return;
  const listed = scores === undefined ? await redis.zmscore(key, ...gone) : [];
  const scoreOf = (id: string, i: number) => scores?.get(id) ?? Number(listed[i] ?? 0);
  const settled = Date.now() - SETTLE_MS;
  const old = gone.filter((id, i) => scoreOf(id, i) < settled);
  if (old.length > 0) await redis.zrem(key, ...old);
}

/** Up to `count` entries of the list `key` after `place` (from the newest when null), in the list's order. */
async function entriesAfter(redis: RedisClient, key: string, place: Entry | null, count: number): Promise<Entry[]> {
  const [older, tied] = await Promise.all([
    redis.zrange(key, place === null ? '+inf' : `(${place.createdAt}`, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, count, 'WITHSCORES'),
    // The entries of the same millisecond as the place (a batch's tests first seen through their
    // results share it): those after it by id.
    place === null ? Promise.resolve([] as string[]) : redis.zrange(key, place.createdAt, String(place.createdAt), 'BYSCORE'),
  ]);
  const entries: Entry[] = tied
    .filter((id) => place !== null && compareIds(id, place.correlationId) < 0)
    .sort((a, b) => compareIds(b, a))
    .map((correlationId) => ({ correlationId, createdAt: (place as Entry).createdAt }));
  for (let i = 0; i + 1 < older.length && entries.length < count; i += 2) entries.push({ correlationId: older[i] as string, createdAt: Number(older[i + 1]) });
  return entries;
}

/** The summary of a listed test whose input was read. */
function toSummary(test: Candidate, onUnreadable?: (correlationId: string, position: number, reason: string) => void): TestSummary {
  const { correlationId, status, owner, createdAt, updatedAt, messageCount } = test;
  const input = readStoredInput(test.input, onUnreadable === undefined ? undefined : (reason) => onUnreadable(correlationId, INPUT_POSITION, reason));
  return { correlationId, status, input, owner, createdAt, updatedAt, messageCount };
}
