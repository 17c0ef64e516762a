import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/config/config.js';
import { createResultLogFromConfig } from '../../src/app/result-log-from-config.js';
import { createRedisConnection } from '../../src/redis/redis-from-config.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { once } from 'node:events';
import { eventually } from '../support/graphql.js';
import { openMonitor, writesOf } from '../support/redis-monitor.js';
import { describeResultLogContract } from './result-log-contract.js';
import { openRedisShape, REDIS_SHAPES, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';
import { incoming, uniqueId } from './storage-contract.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `rcs-test-${process.pid}-${Date.now()}`;
const clients: Redis[] = [];
const connect = (options: { connectionName?: string; retryStrategy?: () => number } = {}) => {
  const client = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2, ...options });
  clients.push(client);
  return client;
};

afterAll(async () => {
  const redis = connect();
  const stream = redis.scanStream({ match: `${prefix}:*`, count: 500 });
  for await (const keys of stream as AsyncIterable<string[]>) if (keys.length > 0) await redis.del(...keys);
  await Promise.all(clients.map((c) => c.quit()));
});

/** A log on connections of its own, as a replica has. */
let replicas = 0;
function replica(bounds: { ttlSeconds: number; maxMessagesPerTest: number }, scriptCalls: 'per-batch' | 'per-test' = 'per-batch'): ResultLog {
  const subscriber = connect({ connectionName: `rcs-test-subscriber-${process.pid}-${++replicas}` });
  return createRedisResultLog({ redis: connect(), subscriber, prefix, logger: createSilentLogger(), scriptCalls, ...bounds });
}

// The contract on each Redis shape the service runs on: one node, a Redis Cluster (one script
// call per test, sharded pub/sub) and a Sentinel-managed primary, on connections opened the way
// the service opens them.
describe.each(REDIS_SHAPES)('on Redis %s', (shapeName) => {
  let shape: RedisShape;
  beforeAll(async () => {
    shape = await openRedisShape(shapeName);
  }, 90_000);
  afterAll(() => shape.close());
  const roles = new WeakMap<ResultLog, string>();
  const shapeReplica = async (bounds: { ttlSeconds: number; maxMessagesPerTest: number; expiryCheckMs?: number }): Promise<ResultLog> => {
    const role = `subscriber-${process.pid}-${++replicas}`;
    const [redis, subscriber] = await Promise.all([shape.connect('commands'), shape.connect(role, { subscriber: true })]);
    // With replicas, as deployed: a write counts once a replica holds it (REDIS_WAIT_REPLICAS=1),
    // and the writes have a connection of their own.
    const waits = shapeName === 'standalone' ? {} : { waitReplicas: 1, writer: await shape.connect('writes') };
    const log = createRedisResultLog({ redis, subscriber, prefix, logger: createSilentLogger(), ...waits, ...bounds });
    roles.set(log, role);
    return log;
  };
  describeResultLogContract(`redis (${shapeName})`, {
    create: shapeReplica,
    // Another replica on the same Redis, with its own connections.
    peer: (_log, bounds) => shapeReplica(bounds),
    // A test's keys taken away, as their expiry does (they share a slot), found by tails that check every 200 ms.
    expiring: async () => {
      const bounds = { ttlSeconds: 3600, maxMessagesPerTest: 100, expiryCheckMs: 200 };
      const [log, peer, keys] = await Promise.all([shapeReplica(bounds), shapeReplica(bounds), shape.connect('commands')]);
      return { log, peer, expire: async (id) => void (await keys.del(`${prefix}:{${id}}:meta`, `${prefix}:{${id}}:msgs`)) };
    },
    // Cut by a second, real connection, the way a network failure or a failover would.
    dropLiveConnection: async (log) => {
      expect(await shape.killConnections(roles.get(log) as string)).toBeGreaterThan(0);
    },
  });

  it.skipIf(shapeName === 'standalone')(
    "covers a new test's list entries with a WAIT on the node that holds each of them",
    async () => {
      const role = `writes-entries-${process.pid}-${++replicas}`;
      const [redis, subscriber, writer] = await Promise.all([
        shape.connect('commands'),
        shape.connect(`subscriber-${role}`, { subscriber: true }),
        shape.connect(role),
      ]);
      const log = createRedisResultLog({
        redis,
        subscriber,
        writer,
        prefix,
        logger: createSilentLogger(),
        ttlSeconds: 100,
        maxMessagesPerTest: 100,
        waitReplicas: 1,
      });
      // The writes' connection to every primary open (a cluster client opens them on first use), and their addresses.
      await Promise.all((writer.isCluster ? (writer as Cluster).nodes('master') : [writer as Redis]).map((node) => node.ping()));
      const ports = (shape.cluster ?? shape.sentinel)?.nodes.map((node) => node.port) ?? [];
      const admins = ports.map((port) => new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 }));
      const mark = uniqueId('entries-covered');
      const monitors: Redis[] = [];
      try {
        const lines = (await Promise.all(admins.map(async (admin) => String(await admin.client('LIST')).split('\n')))).flat();
        const named = new RegExp(` name=(?:\\S*:)?rcs-${role} `);
        const sources = new Set(lines.filter((line) => named.test(line)).map((line) => /(?:^| )addr=(\S+)/.exec(line)?.[1] as string));
        expect(sources.size).toBeGreaterThan(0);
        monitors.push(...(await Promise.all(ports.map((port) => openMonitor(`redis://127.0.0.1:${port}`)))));
        const sent = monitors.map((monitor) => writesOf(monitor, sources, mark));
        // A line each node's monitor sees after everything the create sent there.
        const ended = monitors.map(
          (monitor) => new Promise<void>((resolve) => monitor.on('monitor', (_time: string, args: string[]) => args[1] === `${mark}-end` && resolve())),
        );
        await log.create({ correlationId: `${mark}-test`, input: null, owner: `${mark}-owner` });
        await Promise.all(admins.map((admin) => admin.echo(`${mark}-end`)));
        await Promise.all(ended);
        const sequences = sent.flatMap((bySource) => [...bySource.values()]);
        // Every test's list and the owner's: two entries, wherever their keys live.
        expect(sequences.flat().filter((kind) => kind === 'entry')).toHaveLength(2);
        for (const sequence of sequences)
          if (sequence.includes('entry')) expect(sequence.lastIndexOf('wait'), sequence.join(' ')).toBeGreaterThan(sequence.lastIndexOf('entry'));
      } finally {
        for (const monitor of monitors) monitor.disconnect();
        for (const admin of admins) admin.disconnect();
        await log.dispose();
      }
    },
    30_000,
  );
});
afterAll(stopRedisShapes, 60_000);

const log = (bounds: { ttlSeconds?: number; maxMessagesPerTest?: number } = {}) =>
  replica({ ttlSeconds: bounds.ttlSeconds ?? 100, maxMessagesPerTest: bounds.maxMessagesPerTest ?? 100 });
const one = async (target: ResultLog, message: IncomingMessage) => (await target.append([message]))[0];
/** Resolves once `store` says it is ready (its connections open in the background). */
const untilReady = (store: ResultLog) =>
  eventually(
    () =>
      store.check().then(
        () => true,
        () => false,
      ),
    10_000,
    'the log to be ready',
  );
/**
 * A log on the machine's Redis that waits 50 ms for one replica: it has none, so every write is
 * refused after its WAIT (WAIT 1 answers 0). On connections of its own unless given some.
 */
const refusingLog = (connections: { redis?: RedisClient; writer?: RedisClient; subscriber?: RedisClient } = {}) =>
  createRedisResultLog({
    redis: connections.redis ?? connect(),
    subscriber: connections.subscriber ?? connect(),
    ...(connections.writer === undefined ? {} : { writer: connections.writer }),
    prefix,
    logger: createSilentLogger(),
    ttlSeconds: 100,
    maxMessagesPerTest: 100,
    waitReplicas: 1,
    waitTimeoutMs: 50,
  });
/** The lines of `CLIENT LIST`: one per connection. */
const clientLines = async (redis: Redis) => String(await redis.client('LIST')).split('\n');

describe('redis log specifics', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = connect();
  });

  it('names the keys of one test only in each script call when calls are per test (Redis Cluster)', async () => {
    const store = replica({ ttlSeconds: 100, maxMessagesPerTest: 100 }, 'per-test');
    const ids = [uniqueId('slot-a'), uniqueId('slot-b'), uniqueId('slot-c')];
    const monitor = await openMonitor();
    const calls: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args.slice(3).some((arg) => arg.includes(prefix))) calls.push(args);
    });
    await store.append(ids.flatMap((id) => [incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]));
    await eventually(() => calls.length >= 3, 5000, 'three script calls');
    monitor.disconnect();
    // EVALSHA <sha> <number of keys> <keys...>: two keys, both under the test's hash tag.
    const named = calls.map((args) => args.slice(3, 3 + Number(args[2])));
    expect(named.map((keys) => keys.map((key) => /\{([^}]*)\}/.exec(key)?.[1]))).toEqual(ids.map((id) => [id, id]));
  });

  it('fails a write that fewer replicas than asked acknowledge in time, and its retry finds it stored', async () => {
    const store = refusingLog();
    const id = uniqueId('wait');
    await expect(store.append([incoming(id, { sequence: 1 })])).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      cause: { message: '0 of 1 replicas acknowledged the write within 50 ms' },
    });
    await expect(store.create({ correlationId: id, input: null, owner: null })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const plain = log();
    expect((await one(plain, incoming(id, { sequence: 1 })))?.outcome).toBe('duplicate');
    expect((await plain.get(id))?.messages).toHaveLength(1);
    await store.dispose();
  });

  /** A result log built as a process builds it, waiting for one replica the machine's Redis lacks. */
  const waitingLog = (waitTimeoutMs: number) =>
    createResultLogFromConfig(
      loadConfig({
        STATE_STORE: 'redis',
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        REDIS_WAIT_REPLICAS: '1',
        REDIS_WAIT_TIMEOUT_MS: String(waitTimeoutMs),
      }),
      createSilentLogger(),
    );

  it('lets a write wait REDIS_WAIT_TIMEOUT_MS for its replicas even past the command timeout, on connections opened as the service opens them', async () => {
    // The machine's Redis has no replica: WAIT 1 blocks for its whole timeout, longer than the 2 s
    // a command may otherwise take. The write must fail for the replicas, not for the timeout.
    const { log: store, dispose } = waitingLog(2500);
    try {
      await expect(store.append([incoming(uniqueId('long-wait'), { sequence: 1 })])).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        cause: { message: '0 of 1 replicas acknowledged the write within 2500 ms' },
      });
    } finally {
      await dispose();
    }
  });

  it('answers reads and readiness while writes wait for a replica that does not answer', async () => {
    // The machine's Redis has no replica, as a primary whose replica is down: each write's WAIT
    // blocks its connection for the whole timeout, one write after another. Reads, tails and the
    // readiness check must not queue behind them (on one connection, a read sent after three such
    // writes timed out at 3 s, and readiness took as long).
    const { log: store, dispose } = waitingLog(1500);
    const stored = log();
    const id = uniqueId('read-during-wait');
    await stored.create({ correlationId: id, input: { n: 1 }, owner: 'alice' });
    await one(stored, incoming(id, { sequence: 1 }));
    try {
      await untilReady(store);
      const waiting = async () => (await clientLines(redis)).filter((line) => line.includes(' name=rcs-writes ') && line.includes(' cmd=wait ')).length;
      const waitingBefore = await waiting();
      const settled: string[] = [];
      const writes = [1, 2, 3].map((n) =>
        store.append([incoming(uniqueId('waiting'), { sequence: n })]).then(
          () => settled.push(`write ${n} stored`),
          () => settled.push(`write ${n} refused`),
        ),
      );
      // Sent once a write's WAIT blocks its connection (other suites' writes may wait too: counted before).
      await eventually(async () => (await waiting()) > waitingBefore, 5000, 'a write to wait for its replica');
      const refused = (what: string) => (error: { cause?: { message?: string } }) => settled.push(`${what} refused: ${error.cause?.message ?? String(error)}`);
      const read = store.get(id).then((record) => settled.push(`read ${record?.messages.length ?? 'none'}`), refused('read'));
      const ready = store.check().then(() => settled.push('ready'), refused('readiness'));
      const messages = store.messages(id, { first: 10 }).then((slice) => settled.push(`messages ${slice?.messages.length ?? 'none'}`), refused('messages'));
      const page = store
        .list({ first: 5, owner: 'alice' })
        .then((list) => settled.push(`listed ${list.edges.some((e) => e.node.correlationId === id)}`), refused('list'));
      await Promise.all([...writes, read, ready, messages, page]);
      // Answered before the first write gave up on its replica, and answered right.
      expect(settled.slice(0, 4).sort(), settled.join('; ')).toEqual(['listed true', 'messages 1', 'read 1', 'ready']);
      expect(settled.slice(4), settled.join('; ')).toEqual(['write 1 refused', 'write 2 refused', 'write 3 refused']);
    } finally {
      await dispose();
    }
  });

  it('waits for a reconnecting writes connection before a write sends anything: a test is never stored unlisted', async () => {
    const config = loadConfig({ STATE_STORE: 'redis', REDIS_URL, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '50' }).redis;
    const role = `writes-${process.pid}-${Date.now()}`;
    const connections = [
      createRedisConnection(config, createSilentLogger(), `commands-${role}`),
      createRedisConnection(config, createSilentLogger(), role),
      createRedisConnection(config, createSilentLogger(), `subscriber-${role}`, { subscriber: true }),
    ] as const;
    const [commands, writer, subscriber] = connections;
    const store = refusingLog({ redis: commands, writer, subscriber });
    try {
      await untilReady(store);
      const line = (await clientLines(redis)).find((l) => l.includes(` name=rcs-${role} `));
      const reconnecting = once(writer, 'reconnecting');
      await redis.client('KILL', 'ID', /(?:^| )id=(\d+)/.exec(line ?? '')?.[1] as string);
      await reconnecting;
      // The machine's Redis has no replica: the create is refused for its WAIT, after both its
      // list entry and its script were sent on the reconnected connection.
      const id = uniqueId('writer-reconnects');
      await expect(store.create({ correlationId: id, input: null, owner: 'alice' })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        cause: { message: '0 of 1 replicas acknowledged the write within 50 ms' },
      });
      expect(await redis.zscore(`${prefix}:tests:owner:alice`, id)).not.toBeNull();
    } finally {
      await store.dispose();
      for (const connection of connections) connection.disconnect();
    }
  });

  it("writes a test's list entries ahead of its script, with a WAIT of their own, on the writes' connection: a failover that keeps the test keeps its entries", async () => {
    // The machine's Redis has no replica: each WAIT answers 0 after 50 ms and the write is refused;
    // the order the writes' connection sent it in is what counts here. Opened as the service opens
    // it (auto-pipelined: a command is sent on the next turn, an explicit pipeline at once).
    const role = `writes-entries-${process.pid}-${Date.now()}`;
    const config = loadConfig({ STATE_STORE: 'redis', REDIS_URL, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '50' }).redis;
    const writer = createRedisConnection(config, createSilentLogger(), role);
    const name = `rcs-${role}`;
    const store = refusingLog({ writer });
    await untilReady(store);
    const addr = /(?:^| )addr=(\S+)/.exec((await clientLines(redis)).find((line) => line.includes(` name=${name} `)) ?? '')?.[1] as string;
    expect(addr).toBeDefined();
    const monitor = await openMonitor();
    const mark = uniqueId('entries-waited');
    const sent = writesOf(monitor, new Set([addr]), mark);
    try {
      await expect(store.create({ correlationId: `${mark}-created`, input: null, owner: `${mark}-owner` })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      });
      await expect(store.append([incoming(`${mark}-seen`, { sequence: 1 })])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      await eventually(() => (sent.get(addr) ?? []).filter((kind) => kind === 'wait').length >= 4, 5000, 'both writes and their WAITs');
    } finally {
      monitor.disconnect();
      await store.dispose();
      writer.disconnect();
    }
    // The create's two entries (every test's list, its owner's) with a WAIT of their own, then its
    // script and its WAIT; then the append's. Each WAIT covers what its pipeline wrote: were the
    // connection cut after the entries' answer, the script alone would be sent again.
    expect(sent.get(addr)).toEqual(['entry', 'entry', 'wait', 'script', 'wait', 'entry', 'wait', 'script', 'wait']);
  });

  it('sets the TTL on create and refreshes it on every append', async () => {
    const store = log();
    const id = uniqueId('ttl');
    await store.create({ correlationId: id, input: null, owner: 'alice' });
    expect(await redis.ttl(`${prefix}:{${id}}:meta`)).toBeGreaterThan(90);
    await redis.expire(`${prefix}:{${id}}:meta`, 10);
    await one(store, incoming(id, { sequence: 1 }));
    for (const part of ['meta', 'msgs']) expect(await redis.ttl(`${prefix}:{${id}}:${part}`)).toBeGreaterThan(90);
  });

  it('stores each message once when two replicas append the same records concurrently', async () => {
    const a = log({ maxMessagesPerTest: 1000 });
    const b = log({ maxMessagesPerTest: 1000 });
    const id = uniqueId('race');
    const records = Array.from({ length: 50 }, (_, i) => incoming(id, { messageId: `m${i}`, sequence: 49 - i }));
    const outcomes = await Promise.all([...records.map((r) => one(a, r)), ...records.map((r) => one(b, r))]);
    expect(outcomes.filter((o) => o?.outcome === 'inserted')).toHaveLength(50);
    expect(outcomes.filter((o) => o?.outcome === 'duplicate')).toHaveLength(50);
    const stored = await a.get(id);
    expect(stored?.messages.map((m) => m.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('orders around payloads that Lua JSON cannot decode (lone surrogates, deep nesting)', async () => {
    const store = log();
    const id = uniqueId('odd');
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1100; i++) deep = [deep];
    await one(store, incoming(id, { sequence: 5, payload: '\ud800 lone surrogate' }));
    await one(store, incoming(id, { sequence: 6, payload: deep }));
    await one(store, incoming(id, { sequence: 1 }));
    const unreadable = store.unreadableMessages?.() ?? 0;
    const read = await store.get(id);
    // Stored here past the door (which refuses a payload deeper than JSON_MAX_DEPTH, at most 1000):
    // ordered around, then skipped and counted on the way out, as a stored value no read may serve.
    expect(read?.messages.map((m) => m.sequence)).toEqual([1, 5]);
    expect(store.unreadableMessages?.()).toBe(unreadable + 1);
    expect(read?.messages[1]?.payload).toBe('\ud800 lone surrogate');
  });

  it("announces on the test's channel once per batch that stores something, with the count it holds, and never for a redelivery", async () => {
    const store = log();
    const a = uniqueId('pub-a');
    const b = uniqueId('pub-b');
    const listener = connect();
    const received: Array<[string, string]> = [];
    listener.on('message', (channel: string, notice: string) => received.push([channel, notice]));
    await listener.subscribe(`${prefix}:{${a}}:notices`, `${prefix}:{${b}}:notices`);
    const batch = [
      incoming(a, { sequence: 1 }),
      incoming(b, { sequence: 1 }),
      incoming(a, { sequence: 3 }),
      incoming(a, { sequence: 1 }),
      incoming(a, { sequence: 2 }),
    ];
    await store.append(batch);
    await store.append(batch);
    await store.append([incoming(a, { sequence: 9 })]);
    await eventually(() => received.length >= 3, 5000, 'three notices');
    await new Promise((r) => setTimeout(r, 100));
    expect(received.sort()).toEqual(
      [
        [`${prefix}:{${a}}:notices`, '3'],
        [`${prefix}:{${a}}:notices`, '4'],
        [`${prefix}:{${b}}:notices`, '1'],
      ].sort(),
    );
  });

  it("keeps every key of a test under the test's hash tag, so that the layout suits Redis Cluster", async () => {
    const store = log();
    const id = uniqueId('slot');
    await store.create({ correlationId: id, input: null, owner: 'alice' });
    await store.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2, final: true })]);
    const keys: string[] = [];
    for await (const found of redis.scanStream({ match: `*${id}*`, count: 1000 }) as AsyncIterable<string[]>) keys.push(...found);
    expect(keys.sort()).toEqual(['meta', 'msgs'].map((part) => `${prefix}:{${id}}:${part}`));
  });

  it('costs each test of a batch the same Redis commands whatever its number of messages, its deduplication keys kept in its meta hash as one run of sequences', async () => {
    const store = log();
    const commandsFor = async (id: string, count: number): Promise<string[]> => {
      const monitor = await openMonitor();
      const seen: string[] = [];
      monitor.on('monitor', (_time: string, args: string[]) => {
        // EVAL or EVALSHA, as the connection has the script cached.
        if (args.some((arg) => arg.includes(id)))
          seen.push(
            String(args[0])
              .toUpperCase()
              .replace(/^EVAL(SHA)?$/, 'EVAL'),
          );
      });
      await store.append(Array.from({ length: count }, (_, i) => incoming(id, { sequence: i + 1 })));
      // The last command a script runs: the test's notice.
      await eventually(() => seen.includes('PUBLISH') && seen.filter((c) => c === 'PUBLISH').length >= 2, 5000, 'the notices');
      monitor.disconnect();
      return seen.sort();
    };
    // The script is in Redis's cache from here on.
    await store.append([incoming(uniqueId('cost-0'), { sequence: 1 })]);
    const single = await commandsFor(uniqueId('cost-1'), 1);
    const many = uniqueId('cost-20');
    expect(await commandsFor(many, 20)).toEqual(single);
    // The list entry, the script, one read and one write of the meta hash, the list's length (a
    // run of sequences is pushed whole where the test's run ends), the push, the expiry of the two
    // keys, the two notices.
    expect(single).toEqual(['EVAL', 'EXPIRE', 'EXPIRE', 'HMGET', 'HSET', 'LLEN', 'PUBLISH', 'PUBLISH', 'RPUSH', 'ZADD']);
    // Sequences counting up take no field each: one run holds them (redis-sequence-run.ts).
    const fields = await redis.hgetall(`${prefix}:{${many}}:meta`);
    expect(Object.keys(fields).filter((field) => field.startsWith('~'))).toEqual([]);
    expect(fields.run).toBe('1:21:-1');
    const read = await store.get(many);
    expect(read?.messages).toHaveLength(20);
    expect((await one(store, incoming(many, { sequence: 7 })))?.outcome).toBe('duplicate');
  });

  it("stores a redelivered run once when the test's list expired before its meta hash (the run's length no longer says the list holds it alone)", async () => {
    const store = log();
    const id = uniqueId('list-gone');
    const msgs = `${prefix}:{${id}}:msgs`;
    const outcomes = async (batch: IncomingMessage[]) => (await store.append(batch)).map((r) => r.outcome);
    // A run of 1..3; then the list expires alone (a create refreshes the meta hash only).
    await store.append([1, 2, 3].map((sequence) => incoming(id, { sequence })));
    await redis.del(msgs);
    // One message without a sequence, then 4 and 5, which no longer join the run (the list holds
    // one message): stored as fields. The list holds three messages, as many as the run counts.
    expect(await outcomes([incoming(id, { messageId: 'after-expiry' })])).toEqual(['inserted']);
    expect(await outcomes([4, 5].map((sequence) => incoming(id, { sequence })))).toEqual(['inserted', 'inserted']);
    expect(await redis.llen(msgs)).toBe(3);
    // 4 and 5 again, as a run starting where the test's run ends: found stored, not pushed twice.
    expect(await outcomes([4, 5].map((sequence) => incoming(id, { sequence })))).toEqual(['duplicate', 'duplicate']);
    expect(await redis.llen(msgs)).toBe(3);
  });

  it('refreshes the TTL of every test a batch writes to', async () => {
    const store = log();
    const a = uniqueId('ttl-a');
    const b = uniqueId('ttl-b');
    await store.create({ correlationId: a, input: null, owner: null });
    await redis.expire(`${prefix}:{${a}}:meta`, 10);
    await store.append([incoming(a, { sequence: 1 }), incoming(b, { sequence: 1 }), incoming(a, { sequence: 2 })]);
    for (const id of [a, b]) for (const part of ['meta', 'msgs']) expect(await redis.ttl(`${prefix}:{${id}}:${part}`)).toBeGreaterThan(90);
  });

  it('stores each message once when two replicas append the same batch concurrently', async () => {
    const a = log({ maxMessagesPerTest: 1000 });
    const b = log({ maxMessagesPerTest: 1000 });
    const id = uniqueId('race-many');
    const records = Array.from({ length: 50 }, (_, i) => incoming(id, { messageId: `m${i}`, sequence: 49 - i }));
    const [first, second] = await Promise.all([a.append(records), b.append(records)]);
    const all = [...first, ...second];
    expect(all.filter((o) => o.outcome === 'inserted')).toHaveLength(50);
    expect(all.filter((o) => o.outcome === 'duplicate')).toHaveLength(50);
    expect((await a.get(id))?.messages.map((m) => m.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('refuses messages past the per-test maximum', async () => {
    const store = log({ maxMessagesPerTest: 2 });
    const id = uniqueId('cap');
    await one(store, incoming(id, { sequence: 1 }));
    await one(store, incoming(id, { sequence: 2 }));
    expect((await one(store, incoming(id, { sequence: 3, final: true })))?.outcome).toBe('over-limit');
    expect((await store.get(id))?.status).toBe('RUNNING');
  });

  it('trims what a call pushed beyond the maximum, a repeat of a refused message refused too', async () => {
    const store = log({ maxMessagesPerTest: 2 });
    const id = uniqueId('cap-batch');
    const batch = [1, 2, 3, 3, 1].map((sequence) => incoming(id, { sequence }));
    expect((await store.append(batch)).map((r) => r.outcome)).toEqual(['inserted', 'inserted', 'over-limit', 'over-limit', 'duplicate']);
    expect(await redis.llen(`${prefix}:{${id}}:msgs`)).toBe(2);
    expect((await store.append([incoming(id, { sequence: 4 })])).map((r) => r.outcome)).toEqual(['over-limit']);
    expect((await store.get(id))?.messages.map((m) => m.sequence)).toEqual([1, 2]);
  });

  it('lists tests in sorted sets that outlive their tests a little, pushed back on create and on writes', async () => {
    const store = log();
    const owner = uniqueId('owner');
    const id = uniqueId('indexed');
    const keys = [`${prefix}:tests:owner:${owner}`, `${prefix}:tests:all`];
    await store.create({ correlationId: id, input: null, owner });
    expect(await redis.zscore(keys[0] as string, id)).toBe(String((await store.get(id))?.createdAt));
    expect(await redis.zscore(keys[1] as string, id)).not.toBeNull();
    // The tests' TTL (100 s) and a margin of a tenth of it.
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(100);
    for (const key of keys) await redis.expire(key, 10);
    // Within the margin of its own last push, a replica leaves the expiry be; another one pushes it back.
    await one(store, incoming(id, { sequence: 1 }));
    for (const key of keys) expect(await redis.ttl(key)).toBeLessThanOrEqual(10);
    await one(log(), incoming(id, { sequence: 2 }));
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(100);
  });

  it('lists a test in the same round trip as the script that writes it, before it', async () => {
    const store = log();
    const id = uniqueId('listed-first');
    const monitor = await openMonitor();
    const commands: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.includes(id))) commands.push(String(args[0]).toLowerCase());
    });
    await store.append([incoming(id, { sequence: 1 })]);
    await eventually(() => commands.some((c) => c.startsWith('eval')), 5000, 'the script call');
    monitor.disconnect();
    expect(commands.slice(0, 2)).toEqual(['zadd', commands.find((c) => c.startsWith('eval'))]);
  });

  it('drops the list entry of a test that is gone when a read comes across it', async () => {
    const store = log();
    const owner = uniqueId('owner');
    const [gone, kept] = [uniqueId('gone'), uniqueId('kept')];
    await store.create({ correlationId: gone, input: null, owner, createdAt: Date.now() - 60_000 });
    await store.create({ correlationId: kept, input: null, owner });
    // As if it had expired: its keys are gone, its list entry is not yet.
    await redis.del(`${prefix}:{${gone}}:meta`);
    for (const statuses of [undefined, ['PENDING' as const]]) {
      const page = await store.list({ owner, first: 10, ...(statuses ? { statuses } : {}) });
      expect(page.edges.map((edge) => edge.node.correlationId)).toEqual([kept]);
      expect(page.totalCount).toBe(1);
    }
    expect(await redis.zrange(`${prefix}:tests:owner:${owner}`, 0, '-1')).toEqual([kept]);
  });

  it('leaves out of a page, and keeps in its list, a fresh entry whose test is not written yet (its script on its way)', async () => {
    const store = log();
    const owner = uniqueId('owner');
    const [coming, kept] = [uniqueId('coming'), uniqueId('kept')];
    await store.create({ correlationId: kept, input: null, owner });
    // Entered as a write does before its script lands (behind a WAIT, on another shard, from another replica).
    await redis.zadd(`${prefix}:tests:owner:${owner}`, Date.now(), coming);
    for (const statuses of [undefined, ['PENDING' as const]]) {
      const page = await store.list({ owner, first: 10, ...(statuses ? { statuses } : {}) });
      expect(page.edges.map((edge) => edge.node.correlationId)).toEqual([kept]);
      expect(page.totalCount).toBe(1);
    }
    expect(await redis.zscore(`${prefix}:tests:owner:${owner}`, coming)).not.toBeNull();
    // Its test lands: listed.
    await store.create({ correlationId: coming, input: null, owner });
    expect((await store.list({ owner, first: 10 })).edges.map((edge) => edge.node.correlationId).sort()).toEqual([coming, kept].sort());
  });

  it('publishes one change per test of a batch on the change channel, in the same script call as the append', async () => {
    const store = log();
    const id = uniqueId('change');
    const listener = connect();
    const received: string[] = [];
    listener.on('message', (_channel: string, text: string) => received.push(text));
    await listener.subscribe(`${prefix}:changes`);
    await store.create({ correlationId: id, input: { a: 1 }, owner: 'alice' });
    await store.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2, final: true })]);
    await eventually(() => received.filter((text) => text.includes(id)).length >= 2, 5000, 'two changes');
    const changes = received.filter((text) => text.includes(id)).map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(changes).toMatchObject([
      { id, created: 1, owner: 'alice', count: 0, input: '{"a":1}' },
      { id, created: 0, owner: 'alice', count: 2, finishedAs: 'COMPLETED' },
    ]);
    // An append does not change the input, so its change does not carry it to every replica.
    expect(changes[1]).not.toHaveProperty('input');
  });

  it('announces a test first seen through its results with no input, and an append to it without one', async () => {
    const store = log();
    const id = uniqueId('change-orphan');
    const listener = connect();
    const received: string[] = [];
    listener.on('message', (_channel: string, text: string) => received.push(text));
    await listener.subscribe(`${prefix}:changes`);
    await store.append([incoming(id, { sequence: 1 })]);
    await store.append([incoming(id, { sequence: 2 })]);
    await eventually(() => received.filter((text) => text.includes(id)).length >= 2, 5000, 'two changes');
    const changes = received.filter((text) => text.includes(id)).map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(changes).toMatchObject([
      { id, created: 1, count: 1, input: 'null' },
      { id, created: 0, count: 2 },
    ]);
    expect(changes[1]).not.toHaveProperty('input');
  });

  it('reports STORE_UNAVAILABLE when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const store = createRedisResultLog({ redis: dead, subscriber: dead, ttlSeconds: 100, maxMessagesPerTest: 2, prefix, logger: createSilentLogger() });
    await expect(store.check()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.get('x')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    dead.disconnect();
  });

  it('reports STORE_UNAVAILABLE for a batch when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const store = createRedisResultLog({ redis: dead, subscriber: dead, ttlSeconds: 100, maxMessagesPerTest: 2, prefix, logger: createSilentLogger() });
    await expect(store.append([incoming('x', { sequence: 1 }), incoming('y', { sequence: 1 })])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    dead.disconnect();
  });
});
