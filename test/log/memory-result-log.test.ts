import { describe, expect, it } from 'vitest';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { describeResultLogContract } from './result-log-contract.js';
import { incoming } from './storage-contract.js';

// One log per process (also each replica's own in the replicated mode): its peer is itself.
describeResultLogContract('memory', {
  create: ({ ttlSeconds, maxMessagesPerTest }) => createMemoryResultLog({ ttlSeconds, maxTests: 10_000, maxMessagesPerTest }),
  peer: (log) => log,
  // On a clock the test moves on past the TTL: every test expires at once, found by a sweep every 100 ms.
  expiring: async () => {
    let skew = 0;
    const log = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10_000, maxMessagesPerTest: 100, now: () => Date.now() + skew, sweepIntervalMs: 100 });
    return { log, peer: log, expire: async () => void (skew += 61_000) };
  },
});

describe('memory log bounds', () => {
  it('expires a test after the TTL without writes, and a write refreshes it', async () => {
    let now = 1_000_000;
    const store = createMemoryResultLog({ ttlSeconds: 10, maxTests: 100, maxMessagesPerTest: 100, now: () => now });
    await store.create({ correlationId: 'a', input: null, owner: null });
    await store.create({ correlationId: 'b', input: null, owner: null });
    now += 6_000;
    await appendOne(store, incoming('b', { sequence: 1 }));
    now += 6_000;
    expect(await store.get('a')).toBeNull();
    expect(await store.get('b')).not.toBeNull();
    now += 10_000;
    expect(await store.getMany(['a', 'b'])).toEqual([null, null]);
    await store.dispose();
  });

  it('evicts the least recently updated tests past the maximum', async () => {
    let now = 0;
    const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 3, maxMessagesPerTest: 100, now: () => ++now });
    for (const id of ['a', 'b', 'c']) await store.create({ correlationId: id, input: null, owner: null });
    await appendOne(store, incoming('a', { sequence: 1 })); // a is now the most recent
    await store.create({ correlationId: 'd', input: null, owner: null });
    expect(store.size).toBe(3);
    expect((await store.getMany(['a', 'b', 'c', 'd'])).map((r) => r?.correlationId ?? null)).toEqual(['a', null, 'c', 'd']);
    await store.dispose();
  });

  it('ends the followers of a test evicted to make room, or removed, with TEST_EXPIRED after what they were given', async () => {
    let now = 0;
    const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 2, maxMessagesPerTest: 100, now: () => ++now });
    await appendOne(store, incoming('a', { sequence: 1 }));
    await store.create({ correlationId: 'b', input: null, owner: null });
    const followerOfA = await store.follow('a', { queueLimit: 10 });
    const followerOfB = await store.follow('b', { queueLimit: 10 });
    await store.create({ correlationId: 'c', input: null, owner: null }); // a, the least recently updated, goes
    expect(await followerOfA.next()).toMatchObject({ value: { sequence: 1 }, done: false });
    await expect(followerOfA.next()).rejects.toMatchObject({ code: 'TEST_EXPIRED', extensions: { reason: 'evicted' } });
    expect(await store.remove('b')).toBe(true);
    await expect(followerOfB.next()).rejects.toMatchObject({ code: 'TEST_EXPIRED', extensions: { reason: 'removed' } });
    expect(store.followers()).toBe(0);
    await store.dispose();
  });

  it('refuses messages past the per-test maximum without changing the test', async () => {
    const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10, maxMessagesPerTest: 2 });
    await appendOne(store, incoming('a', { sequence: 1 }));
    await appendOne(store, incoming('a', { sequence: 2 }));
    const third = await appendOne(store, incoming('a', { sequence: 3, final: true }));
    expect(third.outcome).toBe('over-limit');
    const read = await store.get('a');
    expect(read?.messages.map((m) => m.sequence)).toEqual([1, 2]);
    expect(read?.status).toBe('RUNNING');
    await store.dispose();
  });

  it('holds at most maxBytes: evicts the least recently updated tests, refuses a message its own test cannot fit', async () => {
    let now = 0;
    const kb = 'x'.repeat(1000);
    const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 1000, maxBytes: 20_000, now: () => ++now });
    for (const id of ['a', 'b', 'c'])
      for (let sequence = 1; sequence <= 3; sequence++) expect((await appendOne(store, incoming(id, { sequence, payload: kb }))).outcome).toBe('inserted');
    // Three tests of about 6.5 kB each hold less than the budget; growing c evicts a, then b.
    expect(store.bytes).toBeLessThanOrEqual(20_000);
    for (let sequence = 4; sequence <= 8; sequence++) await appendOne(store, incoming('c', { sequence, payload: kb }));
    expect((await store.getMany(['a', 'b', 'c'])).map((test) => test?.correlationId ?? null)).toEqual([null, null, 'c']);
    expect(store.bytes).toBeLessThanOrEqual(20_000);
    // Past the budget with nothing else left to evict: refused, the test unchanged.
    const results = [];
    for (let sequence = 9; sequence <= 20; sequence++) results.push((await appendOne(store, incoming('c', { sequence, payload: kb }))).outcome);
    expect(results).toContain('over-limit');
    expect(store.bytes).toBeLessThanOrEqual(20_000);
    expect((await store.get('c'))?.messages.length).toBe(results.filter((r) => r === 'inserted').length + 8);
    // Removing a test gives its bytes back.
    await store.remove('c');
    expect(store.bytes).toBe(0);
    await store.dispose();
  });

  it('sweeps expired tests in the background', async () => {
    let now = 0;
    const store = createMemoryResultLog({ ttlSeconds: 1, maxTests: 10, maxMessagesPerTest: 10, now: () => now, sweepIntervalMs: 10 });
    await store.create({ correlationId: 'a', input: null, owner: null });
    expect(store.size).toBe(1);
    now = 5_000;
    await new Promise((r) => setTimeout(r, 50));
    expect(store.size).toBe(0);
    await store.dispose();
  });
});

/** Appends one message: a batch of one. */
async function appendOne(log: { append(batch: readonly IncomingMessage[]): Promise<AppendResult[]> }, message: IncomingMessage): Promise<AppendResult> {
  return (await log.append([message]))[0] as AppendResult;
}

describe('memory log delivery', () => {
  it('delivers a batch to followers before append answers', async () => {
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10, maxMessagesPerTest: 10 });
    await log.create({ correlationId: 'a', input: null, owner: null });
    const stream = await log.follow('a', { queueLimit: 10 });
    await log.append([incoming('a', { sequence: 1 }), incoming('a', { sequence: 2, final: true })]);
    // Already delivered: the follower has both and has stopped listening.
    expect(log.followers()).toBe(0);
    expect([(await stream.next()).value?.sequence, (await stream.next()).value?.sequence]).toEqual([1, 2]);
    await log.dispose();
  });
});
