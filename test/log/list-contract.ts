/**
 * The listing half of the result-log contract (result-log-contract.ts): `list` (order, owner and
 * status filters, paging, expiry) and the change feed (`changes`: what is announced, once per
 * batch, to whom, and the cut-off of a subscriber that does not read; `watchChanges`, the
 * service's own watch), on every replica sharing the log.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { TestChangeEvent, TestListPage } from '../../src/domain/types.js';
import type { ListOptions, ResultLog } from '../../src/log/result-log.js';
import { incoming, uniqueId } from './storage-contract.js';
import { onTimeline } from '../support/timeline.js';

/** Logs for the listing tests. */
export interface ListContext {
  /** Two handles on one log: two replicas sharing it, or the same log twice. */
  readonly pair: () => Promise<{ readonly log: ResultLog; readonly peer: ResultLog }>;
  /** A fresh log whose tests expire after `ttlSeconds` without writes. */
  readonly ttl: (ttlSeconds: number) => Promise<ResultLog>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` holds, for at most 5 s (a shared log tells other replicas through Redis). */
async function until(done: () => boolean): Promise<void> {
  for (const started = Date.now(); !done(); await sleep(5)) if (Date.now() - started > 5000) throw new Error('not told within 5 s');
}
const ids = (page: TestListPage) => page.edges.map((edge) => edge.node.correlationId);
const everyone = () => true;

/** Reads `count` changes of the tests `ours` names (fewer if the feed ends). */
async function read(stream: AsyncIterator<TestChangeEvent>, ours: ReadonlySet<string>, count: number): Promise<TestChangeEvent[]> {
  const out: TestChangeEvent[] = [];
  while (out.length < count) {
    const next = await stream.next();
    if (next.done === true) break;
    // A log shared with other tests (one Redis) announces their tests too.
    if (ours.has(next.value.test.correlationId)) out.push(next.value);
  }
  return out;
}

/** Registers the listing tests. */
export function describeListContract(context: ListContext): void {
  describe('listing', () => {
    let log: ResultLog;
    let peer: ResultLog;
    beforeEach(async () => {
      ({ log, peer } = await context.pair());
    });

    /** Starts tests of `owner` one after the other, a few milliseconds apart; the ids, oldest first. */
    const start = async (owner: string | null, count: number, on: ResultLog = peer): Promise<string[]> => {
      const started: string[] = [];
      for (let i = 0; i < count; i++) {
        const id = uniqueId('list');
        await on.create({ correlationId: id, input: { n: i }, owner });
        started.push(id);
        await sleep(3);
      }
      return started;
    };

    it("lists an owner's tests newest first, started on any replica, and pages through them with cursors", async () => {
      const alice = uniqueId('alice');
      const tests = await start(alice, 5);
      await start(uniqueId('bob'), 1);
      const list = (options: Omit<ListOptions, 'owner'>) => log.list({ owner: alice, ...options });
      const first = await list({ first: 2 });
      expect(ids(first)).toEqual([tests[4], tests[3]]);
      expect(first).toMatchObject({ hasNextPage: true, totalCount: 5 });
      const second = await list({ first: 2, after: first.edges.at(-1)?.cursor ?? null });
      expect(ids(second)).toEqual([tests[2], tests[1]]);
      const last = await list({ first: 2, after: second.edges.at(-1)?.cursor ?? null });
      expect(ids(last)).toEqual([tests[0]]);
      expect(last).toMatchObject({ hasNextPage: false, totalCount: 5 });
      expect(last.edges[0]?.node).toMatchObject({ input: { n: 0 }, owner: alice, status: 'PENDING', messageCount: 0 });
    });

    it('keeps a cursor valid when newer tests are started and when its own test is gone', async () => {
      const owner = uniqueId('owner');
      const tests = await start(owner, 3);
      const page = await log.list({ owner, first: 1 });
      await start(owner, 2);
      await peer.remove(tests[2] as string);
      expect(ids(await log.list({ owner, first: 10, after: page.edges[0]?.cursor ?? null }))).toEqual([tests[1], tests[0]]);
    });

    it('filters by status, and counts what matches', async () => {
      const owner = uniqueId('owner');
      const [pending, running, completed, failed] = (await start(owner, 4)) as [string, string, string, string];
      await peer.append([
        incoming(running, { sequence: 1 }),
        incoming(completed, { sequence: 1 }),
        incoming(completed, { sequence: 2, final: true }),
        incoming(failed, { sequence: 1, status: 'FAILED' }),
      ]);
      const finished = await log.list({ owner, first: 10, statuses: ['COMPLETED', 'FAILED'] });
      expect(ids(finished)).toEqual([failed, completed]);
      expect(finished.totalCount).toBe(2);
      expect(finished.edges.map((edge) => [edge.node.status, edge.node.messageCount])).toEqual([
        ['FAILED', 1],
        ['COMPLETED', 2],
      ]);
      const node = finished.edges[1]?.node;
      expect(node?.updatedAt).toBeGreaterThanOrEqual(node?.createdAt ?? Infinity);
      expect(ids(await log.list({ owner, first: 10, statuses: ['PENDING'] }))).toEqual([pending]);
      expect(ids(await log.list({ owner, first: 10, statuses: ['RUNNING', 'PENDING'] }))).toEqual([running, pending]);
      expect(await log.list({ owner, first: 10, statuses: [] })).toEqual({ edges: [], hasNextPage: false, totalCount: 0 });
    });

    it('lists every test without an owner, including those first seen through their results', async () => {
      const [a] = await start(uniqueId('alice'), 1);
      const [b] = await start(uniqueId('bob'), 1);
      const seen = uniqueId('seen');
      await peer.append([incoming(seen, { sequence: 1 })]);
      const page = await log.list({ first: 100 });
      const ours = new Set([a, b, seen]);
      expect(ids(page).filter((id) => ours.has(id))).toEqual([seen, b, a]);
      expect(page.edges.find((edge) => edge.node.correlationId === seen)?.node).toMatchObject({ owner: null, input: null, status: 'RUNNING', messageCount: 1 });
      // An owner's list never holds a test without one.
      expect(ids(await log.list({ owner: '', first: 100 })).includes(seen)).toBe(false);
    });

    it('never lists an expired test, and a write keeps it listed', async () => {
      const short = await context.ttl(1);
      await onTimeline(async (timeline) => {
        const owner = uniqueId('owner');
        const [a, b] = (await start(owner, 2, short)) as [string, string];
        await short.append([incoming(b, { sequence: 1 })]);
        await sleep(600);
        const refreshed = timeline.now();
        await short.append([incoming(b, { sequence: 2 })]);
        await sleep(600);
        const page = await short.list({ owner, first: 10 });
        // b is listed only if this read ended within the TTL of the refresh; a is gone however late.
        timeline.within(refreshed, 1000, 'the refresh and the list after it');
        expect(ids(page)).toEqual([b]);
        expect(page.totalCount).toBe(1);
        expect(ids(await short.list({ first: 100 })).includes(a)).toBe(false);
      });
    });

    it('lists a test for its owner only, even when another subject creates the same id again', async () => {
      const alice = uniqueId('alice');
      const mallory = uniqueId('mallory');
      const [id] = (await start(alice, 1)) as [string];
      expect((await peer.create({ correlationId: id, input: { forged: true }, owner: mallory })).owner).toBe(alice);
      expect(await log.list({ owner: mallory, first: 10 })).toEqual({ edges: [], hasNextPage: false, totalCount: 0 });
      expect(ids(await log.list({ owner: alice, first: 10 }))).toEqual([id]);
    });

    it('rejects a cursor that is not one with BAD_USER_INPUT', async () => {
      for (const after of ['nonsense', Buffer.from('x:y').toString('base64url'), '']) {
        await expect(log.list({ owner: 'x', first: 1, after })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
      }
    });

    it('announces a started test, then one change per batch that stores something, on every replica, and nothing for a redelivery', async () => {
      const stream = await log.changes({ queueLimit: 100, canSee: everyone });
      const owner = uniqueId('owner');
      const id = uniqueId('changes');
      await peer.create({ correlationId: id, input: { n: 1 }, owner });
      const batch = [incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })];
      await peer.append(batch);
      await peer.append(batch);
      await peer.append([incoming(id, { sequence: 3, final: true })]);
      const changes = await read(stream, new Set([id]), 3);
      expect(changes.map((c) => [c.kind, c.test.status, c.test.messageCount])).toEqual([
        ['CREATED', 'PENDING', 0],
        ['UPDATED', 'RUNNING', 2],
        ['UPDATED', 'COMPLETED', 3],
      ]);
      expect(changes[2]?.test).toMatchObject({ correlationId: id, owner });
      // The create carries the input; an append, which does not change it, need not (a shared log
      // leaves it out, and readers that want it read the test).
      expect(changes[0]?.test.input).toEqual({ n: 1 });
      for (const change of changes.slice(1)) if (change.test.input !== undefined) expect(change.test.input).toEqual({ n: 1 });
      expect(changes[2]?.test.updatedAt).toBeGreaterThanOrEqual(changes[0]?.test.createdAt ?? Infinity);
      await stream.return?.();
    });

    it('announces a test first seen through its results as created, once per test of a batch', async () => {
      const stream = await log.changes({ queueLimit: 100, canSee: everyone });
      const a = uniqueId('seen-a');
      const b = uniqueId('seen-b');
      await peer.append([incoming(a, { sequence: 1 }), incoming(b, { sequence: 1 }), incoming(a, { sequence: 2 })]);
      await peer.append([incoming(a, { sequence: 3 })]);
      const changes = await read(stream, new Set([a, b]), 3);
      expect(changes.map((c) => [c.test.correlationId, c.kind, c.test.messageCount, c.test.owner]).sort()).toEqual(
        [
          [a, 'CREATED', 2, null],
          [b, 'CREATED', 1, null],
          [a, 'UPDATED', 3, null],
        ].sort(),
      );
      await stream.return?.();
    });

    it('lists a test first seen through its results for its owner once its start fills it in, announced as created to those who could not see it', async () => {
      const alice = uniqueId('alice');
      const ofAlice = await log.changes({ queueLimit: 100, canSee: (test) => test.owner === alice });
      const ofAll = await log.changes({ queueLimit: 100, canSee: everyone });
      const [older] = await start(alice, 1);
      const id = uniqueId('seen');
      await peer.append([incoming(id, { sequence: 1 })]);
      expect(ids(await log.list({ owner: alice, first: 10 }))).toEqual([older]);
      // Its start request was earlier than the result that made it known, and than `older`.
      const startedAt = Date.now() - 60_000;
      await peer.create({ correlationId: id, input: { n: 7 }, owner: alice, createdAt: startedAt });
      await peer.create({ correlationId: id, input: { n: 7 }, owner: alice, createdAt: startedAt });
      const page = await log.list({ owner: alice, first: 10 });
      expect(ids(page)).toEqual([older, id]);
      expect(page.edges[1]?.node).toMatchObject({ owner: alice, input: { n: 7 }, createdAt: startedAt, status: 'RUNNING', messageCount: 1 });
      await peer.append([incoming(id, { sequence: 2, final: true })]);
      const ours = new Set([older as string, id]);
      const toAlice = await read(ofAlice, ours, 3);
      expect(toAlice.map((c) => [c.test.correlationId, c.kind, c.test.messageCount])).toEqual([
        [older, 'CREATED', 0],
        [id, 'CREATED', 1],
        [id, 'UPDATED', 2],
      ]);
      expect(toAlice[1]?.test).toMatchObject({ owner: alice, input: { n: 7 }, createdAt: startedAt });
      const toAll = await read(ofAll, ours, 4);
      expect(toAll.map((c) => [c.test.correlationId, c.kind, c.test.owner])).toEqual([
        [older, 'CREATED', alice],
        [id, 'CREATED', null],
        [id, 'UPDATED', alice],
        [id, 'UPDATED', alice],
      ]);
      await ofAlice.return?.();
      await ofAll.return?.();
    });

    it('delivers to each subscriber only the changes of the tests it may see', async () => {
      const alice = uniqueId('alice');
      const bob = uniqueId('bob');
      const ofAlice = await log.changes({ queueLimit: 100, canSee: (test) => test.owner === alice });
      const ofBob = await log.changes({ queueLimit: 100, canSee: (test) => test.owner === bob });
      const [a] = await start(alice, 1);
      const [b] = await start(bob, 1);
      await peer.append([incoming(a as string, { sequence: 1 }), incoming(b as string, { sequence: 1 })]);
      const ours = new Set([a, b] as string[]);
      expect((await read(ofAlice, ours, 2)).map((c) => [c.test.correlationId, c.kind])).toEqual([
        [a, 'CREATED'],
        [a, 'UPDATED'],
      ]);
      expect((await read(ofBob, ours, 2)).map((c) => [c.test.correlationId, c.kind])).toEqual([
        [b, 'CREATED'],
        [b, 'UPDATED'],
      ]);
      await ofAlice.return?.();
      await ofBob.return?.();
    });

    it('ends at once on return() while waiting, and leaves no subscriber behind', async () => {
      const stream = await log.changes({ queueLimit: 10, canSee: everyone });
      const other = await log.changes({ queueLimit: 10, canSee: everyone });
      expect(log.changeSubscribers()).toBe(2);
      const waiting = stream.next();
      await stream.return?.();
      expect(await waiting).toEqual({ value: undefined, done: true });
      expect(log.changeSubscribers()).toBe(1);
      await other.return?.();
      expect(log.changeSubscribers()).toBe(0);
    });

    it('tells a watcher (the service’s own) every change’s test id, before any subscriber, whoever owns it, counted apart from the clients', async () => {
      const told: string[] = [];
      const stop = await log.watchChanges((id) => told.push(id));
      expect(log.changeSubscribers()).toBe(0);
      // A client of another owner only, as the witness that each change has arrived.
      const owner = uniqueId('watched');
      const witness = await log.changes({ queueLimit: 100, canSee: (test) => test.owner === owner });
      expect(log.changeSubscribers()).toBe(1);
      const tests = await start(owner, 2);
      const [a, b] = tests as [string, string];
      const unowned = uniqueId('unowned');
      await peer.create({ correlationId: unowned, input: null, owner: uniqueId('someone-else') });
      // One change per test per append, however many messages it stored (both tests had none: the append was theirs alone).
      await peer.append([incoming(a, { sequence: 1 }), incoming(a, { sequence: 2 }), incoming(b, { sequence: 1 }), incoming(unowned, { sequence: 1 })]);
      // In no set order between tests: on a cluster each test's changes come on its own shard's channel.
      const seen = await read(witness, new Set(tests), 4);
      expect(seen.map((change) => change.test.correlationId).sort()).toEqual([a, a, b, b].sort());
      // Told before the witness was: every change the witness read, the watcher had.
      const of = (id: string) => told.filter((t) => t === id).length;
      expect([of(a), of(b)]).toEqual([2, 2]);
      // Whoever owns the test: the watcher sees what no client here may.
      await until(() => of(unowned) === 2);
      stop();
      await peer.append([incoming(a, { sequence: 3 })]);
      expect(await read(witness, new Set([a]), 1)).toHaveLength(1);
      expect(of(a)).toBe(2);
      await witness.return?.();
      expect(log.changeSubscribers()).toBe(0);
    });

    it('tells a watcher alone (no client subscribed) of what appends change', async () => {
      const told: string[] = [];
      const stop = await log.watchChanges((id) => told.push(id));
      const [a] = (await start(uniqueId('alone'), 1)) as [string];
      await peer.append([incoming(a, { sequence: 1 })]);
      await until(() => told.filter((t) => t === a).length === 2);
      stop();
    });

    it('cuts off a subscriber that falls more than queueLimit changes behind with SUBSCRIBER_TOO_SLOW', async () => {
      const owner = uniqueId('slow');
      const slow = await log.changes({ queueLimit: 2, canSee: (test) => test.owner === owner });
      const witness = await log.changes({ queueLimit: 100, canSee: (test) => test.owner === owner });
      const tests = await start(owner, 4);
      // The witness has read every change, so the slow subscriber has been handed them too.
      expect(await read(witness, new Set(tests), 4)).toHaveLength(4);
      await expect(slow.next()).rejects.toMatchObject({ code: 'SUBSCRIBER_TOO_SLOW' });
      expect(log.changeSubscribers()).toBe(1);
      await witness.return?.();
    });

    it('answers a page that names no test when nothing matches', async () => {
      expect(await log.list({ owner: uniqueId('nobody'), first: 5 })).toEqual({ edges: [], hasNextPage: false, totalCount: 0 });
    });
  });
}
