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
});
