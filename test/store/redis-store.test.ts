import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import { describeStoreContract, incoming, uniqueId } from './store-contract.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `rcs-test-${process.pid}-${Date.now()}`;
const clients: Redis[] = [];
const connect = () => {
  const client = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 });
  clients.push(client);
  return client;
};

afterAll(async () => {
  const redis = connect();
  const stream = redis.scanStream({ match: `${prefix}:*`, count: 500 });
  for await (const keys of stream as AsyncIterable<string[]>) if (keys.length > 0) await redis.del(...keys);
  await Promise.all(clients.map((c) => c.quit()));
});

describeStoreContract('redis', () => createRedisStore({ redis: connect(), ttlSeconds: 3600, maxMessagesPerTest: 10_000, prefix }));

describe('redis store specifics', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = connect();
  });

  it('sets the TTL on create and refreshes it on every append', async () => {
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 100, prefix });
    const id = uniqueId('ttl');
    await store.create({ correlationId: id, input: null, owner: 'alice' });
    expect(await redis.ttl(`${prefix}:{${id}}:meta`)).toBeGreaterThan(90);
    await redis.expire(`${prefix}:{${id}}:meta`, 10);
    await store.append(incoming(id, { sequence: 1 }));
    for (const part of ['meta', 'msgs', 'keys']) expect(await redis.ttl(`${prefix}:{${id}}:${part}`)).toBeGreaterThan(90);
  });

  it('stores each message once when two replicas append the same records concurrently', async () => {
    const a = createRedisStore({ redis: connect(), ttlSeconds: 100, maxMessagesPerTest: 1000, prefix });
    const b = createRedisStore({ redis: connect(), ttlSeconds: 100, maxMessagesPerTest: 1000, prefix });
    const id = uniqueId('race');
    const records = Array.from({ length: 50 }, (_, i) => incoming(id, { messageId: `m${i}`, sequence: 49 - i }));
    const outcomes = await Promise.all([...records.map((r) => a.append(r)), ...records.map((r) => b.append(r))]);
    expect(outcomes.filter((o) => o.outcome === 'inserted')).toHaveLength(50);
    expect(outcomes.filter((o) => o.outcome === 'duplicate')).toHaveLength(50);
    const stored = await a.get(id);
    expect(stored?.messages.map((m) => m.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('orders around payloads that Lua JSON cannot decode (lone surrogates, deep nesting)', async () => {
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 100, prefix });
    const id = uniqueId('odd');
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1100; i++) deep = [deep];
    await store.append(incoming(id, { sequence: 5, payload: '\ud800 lone surrogate' }));
    await store.append(incoming(id, { sequence: 6, payload: deep }));
    await store.append(incoming(id, { sequence: 1 }));
    const read = await store.get(id);
    expect(read?.messages.map((m) => m.sequence)).toEqual([1, 5, 6]);
    expect(read?.messages[1]?.payload).toBe('\ud800 lone surrogate');
  });

  it('announces a new message on the PubSub channel in the same step that stores it, and a duplicate never', async () => {
    const publishPrefix = `${prefix}:events:`;
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 100, prefix, publishPrefix });
    const id = uniqueId('pub');
    const listener = connect();
    const received: Array<{ message: { sequence: number; receivedAt: number; payload: unknown }; status: string }> = [];
    listener.on('message', (_channel: string, raw: string) => received.push(JSON.parse(raw)));
    await listener.subscribe(`${publishPrefix}${id}`);
    const first = await store.append(incoming(id, { sequence: 1, payload: { a: 'ü' } }));
    const again = await store.append(incoming(id, { sequence: 1, payload: { a: 'ü' } }));
    const last = await store.append(incoming(id, { sequence: 2, final: true }));
    expect([first.published, again.published, last.published]).toEqual([true, undefined, true]);
    for (let i = 0; i < 50 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(received.map((e) => [e.message.sequence, e.status])).toEqual([[1, 'RUNNING'], [2, 'COMPLETED']]);
    expect(received[0]?.message).toEqual({ ...first.message, payload: { a: 'ü' } });
  });

  it('announces each message a batch stores on its test\'s channel once, in batch order', async () => {
    const publishPrefix = `${prefix}:events:`;
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 100, prefix, publishPrefix });
    const a = uniqueId('pub-a');
    const b = uniqueId('pub-b');
    const listener = connect();
    const received: Array<{ channel: string; event: { message: { correlationId: string; sequence: number; receivedAt: number }; status: string } }> = [];
    listener.on('message', (channel: string, raw: string) => received.push({ channel, event: JSON.parse(raw) }));
    await listener.subscribe(`${publishPrefix}${a}`, `${publishPrefix}${b}`);
    const batch = [
      incoming(a, { sequence: 1 }),
      incoming(b, { sequence: 1 }),
      incoming(a, { sequence: 3 }),
      incoming(a, { sequence: 1 }),
      incoming(a, { sequence: 2 }),
      incoming(b, { sequence: 2, final: true }),
    ];
    const results = await store.appendMany(batch);
    expect(results.map((r) => r.published)).toEqual([true, true, true, undefined, true, true]);
    const expected = [[a, 1, 'RUNNING'], [b, 1, 'RUNNING'], [a, 3, 'RUNNING'], [a, 2, 'RUNNING'], [b, 2, 'COMPLETED']];
    for (let i = 0; i < 50 && received.length < expected.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(received.map(({ channel, event }) => [channel, event.message.correlationId, event.message.sequence, event.status])).toEqual(
      expected.map(([id, seq, status]) => [`${publishPrefix}${id}`, id, seq, status]),
    );
    expect(received[0]?.event.message).toEqual(results[0]?.message);
    // A redelivery of the whole batch stores nothing and so announces nothing.
    const again = await store.appendMany(batch);
    expect(again.map((r) => r.published)).toEqual(Array(6).fill(undefined));
    await store.append(incoming(a, { sequence: 9 }));
    for (let i = 0; i < 50 && received.length < expected.length + 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(received.map(({ event }) => event.message.sequence)).toEqual([1, 1, 3, 2, 2, 9]);
  });

  it('refreshes the TTL of every test a batch writes to', async () => {
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 100, prefix });
    const a = uniqueId('ttl-a');
    const b = uniqueId('ttl-b');
    await store.create({ correlationId: a, input: null, owner: null });
    await redis.expire(`${prefix}:{${a}}:meta`, 10);
    await store.appendMany([incoming(a, { sequence: 1 }), incoming(b, { sequence: 1 }), incoming(a, { sequence: 2 })]);
    for (const id of [a, b]) for (const part of ['meta', 'msgs', 'keys']) expect(await redis.ttl(`${prefix}:{${id}}:${part}`)).toBeGreaterThan(90);
  });

  it('stores each message once when two replicas append the same batch concurrently', async () => {
    const a = createRedisStore({ redis: connect(), ttlSeconds: 100, maxMessagesPerTest: 1000, prefix });
    const b = createRedisStore({ redis: connect(), ttlSeconds: 100, maxMessagesPerTest: 1000, prefix });
    const id = uniqueId('race-many');
    const records = Array.from({ length: 50 }, (_, i) => incoming(id, { messageId: `m${i}`, sequence: 49 - i }));
    const [first, second] = await Promise.all([a.appendMany(records), b.appendMany(records)]);
    const all = [...first, ...second];
    expect(all.filter((o) => o.outcome === 'inserted')).toHaveLength(50);
    expect(all.filter((o) => o.outcome === 'duplicate')).toHaveLength(50);
    expect((await a.get(id))?.messages.map((m) => m.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('refuses messages past the per-test maximum', async () => {
    const store = createRedisStore({ redis, ttlSeconds: 100, maxMessagesPerTest: 2, prefix });
    const id = uniqueId('cap');
    await store.append(incoming(id, { sequence: 1 }));
    await store.append(incoming(id, { sequence: 2 }));
    expect((await store.append(incoming(id, { sequence: 3, final: true }))).outcome).toBe('over-limit');
    expect((await store.get(id))?.status).toBe('RUNNING');
  });

  it('reports STORE_UNAVAILABLE when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const store = createRedisStore({ redis: dead, ttlSeconds: 100, maxMessagesPerTest: 2, prefix });
    await expect(store.check()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.get('x')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    dead.disconnect();
  });

  it('reports STORE_UNAVAILABLE for a batch when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const store = createRedisStore({ redis: dead, ttlSeconds: 100, maxMessagesPerTest: 2, prefix });
    await expect(store.appendMany([incoming('x', { sequence: 1 }), incoming('y', { sequence: 1 })])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    dead.disconnect();
  });
});
