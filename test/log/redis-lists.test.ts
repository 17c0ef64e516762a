/**
 * What a page of tests costs the Redis log (seen with MONITOR): a range of the list's sorted set
 * and the summaries of the page's tests, never the whole list; the entries of expired tests
 * dropped a sweep at a time; a status filter that looks through the newest entries of a list only.
 */
import { describe, expect, it } from 'vitest';
import { FILTER_WINDOW, SWEEP } from '../../src/log/redis-test-index.js';
import { eventually } from '../support/graphql.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { commandsNaming, openMonitor } from '../support/redis-monitor.js';
import { incoming, uniqueId } from './storage-contract.js';

const { prefix, connect, createLog: createLogWith } = useRedisLogs('rcs-lists');
const createLog = (ttlSeconds = 3600) => createLogWith({ ttlSeconds });
const redis = connect();

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('a page of tests in Redis', () => {
  it("reads the page's entries of the list and their summaries, not the whole list", async () => {
    const log = createLog();
    const owner = uniqueId('owner');
    const ids = await Promise.all(
      range(1, 300).map((i) =>
        log
          .create({ correlationId: `${owner}-${String(i).padStart(3, '0')}`, input: { i }, owner, createdAt: 1_700_000_000_000 + i })
          .then((test) => test.correlationId),
      ),
    );
    const monitor = await openMonitor();
    const commands = commandsNaming(monitor, owner);
    const first = await log.list({ owner, first: 20 });
    const second = await log.list({ owner, first: 20, after: first.edges.at(-1)?.cursor ?? null });
    // Every command of both reads has reached the monitor once their last summary reads have.
    const hmgets = () => commands.filter(([name]) => name === 'hmget');
    await eventually(() => hmgets().length >= 2 * 21 + 2 * SWEEP, 5000, 'both pages');
    monitor.disconnect();
    expect(first.edges.map((edge) => edge.node.correlationId)).toEqual(ids.slice(280).reverse());
    expect(second.edges.map((edge) => edge.node.correlationId)).toEqual(ids.slice(260, 280).reverse());
    expect(first).toMatchObject({ hasNextPage: true, totalCount: 300 });
    expect(first.edges[0]?.node).toMatchObject({ owner, input: { i: 300 }, status: 'PENDING', messageCount: 0 });
    const zranges = commands.filter(([name]) => name === 'zrange').map((command) => command.slice(2).join(' '));
    // Each page: 21 entries (one to tell whether more follow); the second also the entries of its
    // cursor's millisecond; and the sweep's look at entries old enough to have expired.
    expect(zranges.filter((args) => args.includes('REV'))).toEqual([
      '+inf -inf BYSCORE REV LIMIT 0 21 WITHSCORES',
      '(1700000000281 -inf BYSCORE REV LIMIT 0 21 WITHSCORES',
    ]);
    expect(hmgets()).toHaveLength(2 * 21 + 2 * SWEEP);
  });

  it('lists a test first seen through its results at the time its start gives it, in every list', async () => {
    const log = createLog();
    const owner = uniqueId('owner');
    const id = uniqueId('seen');
    await log.append([incoming(id, { sequence: 1 })]);
    await log.create({ correlationId: id, input: null, owner, createdAt: 1_600_000_000_000 });
    for (const key of [`${prefix}:tests:all`, `${prefix}:tests:owner:${owner}`]) expect(await redis.zscore(key, id), key).toBe('1600000000000');
    expect((await log.list({ owner, first: 1 })).edges[0]?.node).toMatchObject({ correlationId: id, createdAt: 1_600_000_000_000, messageCount: 1 });
  });

  it('drops the entries of expired tests a sweep at a time, from the oldest, and counts what is left', async () => {
    const log = createLog(60);
    const owner = uniqueId('owner');
    const live = await Promise.all(
      range(1, 3).map((i) => log.create({ correlationId: `${owner}-live-${i}`, input: null, owner }).then((test) => test.correlationId)),
    );
    // Entries of tests long gone, older than every live one, as a list keeps them until a read drops them.
    const key = `${prefix}:tests:owner:${owner}`;
    await redis.zadd(key, ...range(1, 150).flatMap((i) => [1_600_000_000_000 + i, `${owner}-gone-${i}`]));
    const page = await log.list({ owner, first: 2 });
    expect(page.edges.map((edge) => edge.node.correlationId)).toEqual([live[2], live[1]]);
    expect(await redis.zcard(key)).toBe(3 + 150 - SWEEP);
    await log.list({ owner, first: 2 });
    expect(await redis.zcard(key)).toBe(3);
    expect((await log.list({ owner, first: 2 })).totalCount).toBe(3);
  });

  it('filters by status among the newest entries of a list only', async () => {
    const log = createLog();
    const owner = uniqueId('owner');
    const failed = uniqueId('failed');
    await log.create({ correlationId: failed, input: null, owner, createdAt: 1_700_000_000_000 });
    await log.append([incoming(failed, { sequence: 1, status: 'FAILED' })]);
    const newer = range(1, FILTER_WINDOW).map((i) => ({ correlationId: `${owner}-${i}`, input: null, owner, createdAt: 1_700_000_000_000 + i }));
    expect((await log.list({ owner, first: 1, statuses: ['FAILED'] })).edges.map((edge) => edge.node.correlationId)).toEqual([failed]);
    for (let from = 0; from < newer.length; from += 100) await Promise.all(newer.slice(from, from + 100).map((test) => log.create(test)));
    expect(await log.list({ owner, first: 1, statuses: ['FAILED'] })).toEqual({ edges: [], hasNextPage: false, totalCount: 0 });
    expect((await log.list({ owner, first: 1 })).totalCount).toBe(FILTER_WINDOW + 1);
  });
});
