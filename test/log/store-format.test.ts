// The stored format's version (src/log/store-format.ts) on the machine's Redis: a new store is
// claimed for this release's format, a store written by a newer release is refused (not ready, no
// read and no write, with the reason), what earlier versions wrote, before the marker existed,
// is read as format 1, a store marked 1 is written as format 1 until the marker moves, and
// replicas that read the marker at different times share a test safely.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../src/base/logger.js';
import { isServiceError } from '../../src/base/errors.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { STORE_FORMAT, storeFormatKey } from '../../src/log/store-format.js';
import { incoming, uniqueId } from './storage-contract.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = `rcs-test-format-${process.pid}-${Date.now()}`;
const clients: Redis[] = [];
const connect = () => {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  clients.push(client);
  return client;
};
let stores = 0;
/** A prefix of its own per case: the marker is one per store. */
const newPrefix = () => `${run}-${++stores}`;
/** The fields of a test's meta hash that hold deduplication keys, and its run of sequences. */
const keysOf = async (prefix: string, id: string) => {
  const fields = await connect().hgetall(`${prefix}:{${id}}:meta`);
  return {
    fields: Object.keys(fields)
      .filter((field) => field.startsWith('~'))
      .sort(),
    run: fields.run,
  };
};
/** A log on connections of its own, as a replica has, once they are connected. */
const replica = async (prefix: string): Promise<ResultLog> => {
  const [redis, subscriber] = [connect(), connect()];
  await Promise.all([redis.ping(), subscriber.ping()]);
  return createRedisResultLog({ redis, subscriber, prefix, ttlSeconds: 60, maxMessagesPerTest: 100, logger: createSilentLogger() });
};

/** A replica of a store whose marker is set to `format` first, once it has read the marker. */
const replicaOfFormat = async (prefix: string, format: string): Promise<ResultLog> => {
  await connect().set(storeFormatKey(prefix), format);
  const log = await replica(prefix);
  await log.check();
  return log;
};

/** The cause's message of a refusal: what /readyz shows an operator. */
const reasonOf = async (promise: Promise<unknown>): Promise<string> => {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isServiceError(error) && error.code).toBe('STORE_UNAVAILABLE');
  return String((error as Error & { cause?: Error }).cause?.message);
};

afterAll(async () => {
  const redis = connect();
  for await (const keys of redis.scanStream({ match: `${run}-*`, count: 500 }) as AsyncIterable<string[]>) if (keys.length > 0) await redis.del(...keys);
  await Promise.all(clients.map((c) => c.quit()));
});

describe('the stored format', () => {
  it('is claimed for this release when the store has no marker, and a replica is then ready', async () => {
    const prefix = newPrefix();
    const log = await replica(prefix);
    await log.check();
    expect(await connect().get(storeFormatKey(prefix))).toBe(String(STORE_FORMAT));
    await log.dispose();
  });

  it('written by a newer release is refused: not ready, no write and no read, with the reason', async () => {
    const prefix = newPrefix();
    const redis = connect();
    const log = await replica(prefix);
    // A test stored while the format was this release's.
    const id = uniqueId();
    await log.create({ correlationId: id, input: { name: 'before' }, owner: null });
    // A newer release moves the marker.
    await redis.set(storeFormatKey(prefix), String(STORE_FORMAT + 1));
    const reason = await reasonOf(log.check());
    expect(reason).toContain(`holds format ${STORE_FORMAT + 1}, written by a newer release`);
    expect(reason).toContain('REDIS_KEY_PREFIX');
    // The readiness check read the marker: from now on nothing is written or read.
    expect(await reasonOf(log.append([incoming(id, { sequence: 1 })]))).toBe(reason);
    expect(await reasonOf(log.get(id))).toBe(reason);
    expect(await redis.llen(`${prefix}:{${id}}:msgs`)).toBe(0);
    // A replica that starts on such a store refuses its very first write, before any readiness check.
    const late = await replica(prefix);
    expect(await reasonOf(late.create({ correlationId: uniqueId(), input: null, owner: null }))).toBe(reason);
    // Moved back (a release that reads it rolled out again): ready at the next check.
    await redis.set(storeFormatKey(prefix), String(STORE_FORMAT));
    await log.check();
    expect((await log.append([incoming(id, { sequence: 1 })])).map((r) => r.outcome)).toEqual(['inserted']);
    await Promise.all([log.dispose(), late.dispose()]);
  });

  it('is refused when the marker is not a format at all', async () => {
    const prefix = newPrefix();
    await connect().set(storeFormatKey(prefix), 'two');
    const log = await replica(prefix);
    expect(await reasonOf(log.check())).toBe(
      `the store's format marker '${storeFormatKey(prefix)}' holds "two", which is no format this release knows (it reads 1, 2)`,
    );
    await log.dispose();
  });

  it('of a store written before the marker existed is read as format 1', async () => {
    // The layout and the texts as the releases before the marker wrote them (redis-result-log.ts,
    // message-format.ts): a meta hash with a deduplication field, a list of messages, one of them
    // received at a fractional millisecond as the oldest ones were.
    const prefix = newPrefix();
    const redis = connect();
    const id = uniqueId();
    const base = `${prefix}:{${id}}`;
    await redis.hset(`${base}:meta`, {
      createdAt: '1764000000000',
      updatedAt: '1764000000500',
      input: '{"name":"nightly"}',
      owner: 'client:demo',
      finishedAs: 'COMPLETED',
      '~k1': '1764000000250.5',
      '~k2': '1764000000500',
    });
    await redis.rpush(
      `${base}:msgs`,
      '{"key":"k1","messageId":"m1","sequence":1,"status":"RUNNING","final":false,"payload":{"step":1},"producedAt":null,"receivedAt":1764000000250.5}',
      '{"key":"k2","messageId":"m2","sequence":2,"status":"COMPLETED","final":true,"payload":{"step":2},"producedAt":1764000000400,"receivedAt":1764000000500}',
    );
    const log = await replica(prefix);
    await log.check();
    const test = await log.get(id);
    expect(test).toMatchObject({ correlationId: id, status: 'COMPLETED', input: { name: 'nightly' }, owner: 'client:demo', createdAt: 1764000000000 });
    expect(test?.messages.map((m) => [m.sequence, m.status, m.payload, m.receivedAt])).toEqual([
      [1, 'RUNNING', { step: 1 }, 1764000000250.5],
      [2, 'COMPLETED', { step: 2 }, 1764000000500],
    ]);
    // Its deduplication field still holds: a redelivered message is not stored twice.
    expect((await log.append([incoming(id, { key: 'k1', sequence: 1 })])).map((r) => r.outcome)).toEqual(['duplicate']);
    await log.dispose();
  });

  it('marked 1 is written as format 1, a field per message, until the marker moves to 2; then new tests keep a run of sequences', async () => {
    const prefix = newPrefix();
    const redis = connect();
    const log = await replicaOfFormat(prefix, '1');
    const old = uniqueId('format-1');
    await log.append([1, 2, 3].map((sequence) => incoming(old, { sequence })));
    expect(await keysOf(prefix, old)).toEqual({ fields: ['~s:1', '~s:2', '~s:3'], run: undefined });
    // Every replica runs this release: the operator moves the marker, read at the next check.
    await redis.set(storeFormatKey(prefix), '2');
    await log.check();
    // A test begun under format 1 keeps its fields, and they still hold.
    expect((await log.append([incoming(old, { sequence: 2 }), incoming(old, { sequence: 4 })])).map((r) => r.outcome)).toEqual(['duplicate', 'inserted']);
    expect(await keysOf(prefix, old)).toEqual({ fields: ['~s:1', '~s:2', '~s:3', '~s:4'], run: undefined });
    // A new one holds its sequences in one field; a redelivery is found there, with its stored copy's time.
    const fresh = uniqueId('format-2');
    const [first] = await log.append([1, 2, 3].map((sequence) => incoming(fresh, { sequence })));
    expect(await keysOf(prefix, fresh)).toEqual({ fields: [], run: '1:4:-1' });
    const again = await log.append([incoming(fresh, { sequence: 1 })]);
    expect(again.map((r) => [r.outcome, r.message.receivedAt])).toEqual([['duplicate', first?.message.receivedAt]]);
    expect((await log.get(fresh))?.messages.map((m) => m.sequence)).toEqual([1, 2, 3]);
    await log.dispose();
  });

  it('shared by a replica that still writes format 1 and one that writes 2, deduplicates each sequence once', async () => {
    const prefix = newPrefix();
    const behind = await replicaOfFormat(prefix, '1');
    const ahead = await replicaOfFormat(prefix, '2');
    const id = uniqueId('format-mixed');
    const outcomes = async (log: ResultLog, sequences: number[]) =>
      (await log.append(sequences.map((sequence) => incoming(id, { sequence })))).map((r) => r.outcome[0]).join('');
    expect(await outcomes(ahead, [1, 2, 3])).toBe('iii');
    // The replica that has not read the new marker yet writes a field, and the run notes it.
    expect(await outcomes(behind, [5, 2])).toBe('id');
    expect(await keysOf(prefix, id)).toEqual({ fields: ['~s:5'], run: '1:4:5' });
    expect(await outcomes(ahead, [5, 4, 6])).toBe('dii');
    expect(await outcomes(behind, [4, 6, 3, 7])).toBe('dddi');
    expect(await outcomes(ahead, [7, 1])).toBe('dd');
    expect((await ahead.get(id))?.messages.map((m) => m.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    await Promise.all([behind.dispose(), ahead.dispose()]);
  });
});
