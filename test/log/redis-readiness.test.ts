/**
 * The Redis log's readiness (`check`, what `/readyz` asks) follows the service's own connections,
 * not only Redis: while the command connection or the subscriber connection connects or
 * reconnects, every command the service sends on it is refused (no offline queue), so the log is
 * not ready, whatever the nodes answer. And what a request or the consumer asks while the command
 * connection reconnects waits for it a moment instead of failing, and fails once that moment is
 * over. On a private Redis with a password (a connection is held down by changing the password,
 * then cutting it) and on a Redis Cluster.
 */
import { once } from 'node:events';
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { RedisConfig } from '../../src/config/redis.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createRedisConnection } from '../../src/redis/redis-from-config.js';
import { eventually } from '../support/graphql.js';
import { openRedisShape, stopRedisShapes } from '../support/redis-shapes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { incoming, uniqueId } from './storage-contract.js';

const PASSWORD = 'readiness-password';
const prefix = `rcs-ready-${process.pid}`;

/** The log on connections opened as the service opens them, named `rcs-<role>-commands` and `rcs-<role>-subscriber`. */
function openLog(config: RedisConfig, role: string): { log: ResultLog; commands: RedisClient; subscriber: RedisClient; close(): Promise<void> } {
  const commands = createRedisConnection(config, createSilentLogger(), `${role}-commands`);
  const subscriber = createRedisConnection(config, createSilentLogger(), `${role}-subscriber`, { subscriber: true });
  const log = createRedisResultLog({ redis: commands, subscriber, prefix, ttlSeconds: 600, maxMessagesPerTest: 100, logger: createSilentLogger() });
  return {
    log,
    commands,
    subscriber,
    async close() {
      await log.dispose();
      for (const client of [commands, subscriber]) client.disconnect();
    },
  };
}
/** Why the log is not ready now, or `ready`. */
const readiness = (log: ResultLog) =>
  log.check().then(
    () => 'ready',
    (error: Error) => (error.cause instanceof Error ? error.cause.message : error.message),
  );

describe('readiness and requests while a connection of one Redis node reconnects', () => {
  let server: PrivateRedis;
  let admin: Redis;
  let config: RedisConfig;

  beforeAll(async () => {
    server = await startPrivateRedis({ password: PASSWORD });
    admin = new Redis(server.url, { maxRetriesPerRequest: 0 });
    config = loadConfig({ STATE_STORE: 'redis', REDIS_URL: server.url }).redis;
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  /** Cuts every connection named `rcs-<name>`; answers how many. */
  const cut = async (name: string) => {
    const lines = String(await admin.client('LIST'))
      .split('\n')
      .filter((line) => line.includes(` name=rcs-${name} `));
    for (const line of lines) await admin.client('KILL', 'ID', /(?:^| )id=(\d+)/.exec(line)?.[1] as string);
    return lines.length;
  };
  /** Runs `during` while connections cannot authenticate (the password changed), and puts the password back. */
  const withPasswordChanged = async (during: () => Promise<void>) => {
    await admin.config('SET', 'requirepass', `${PASSWORD}-changed`);
    try {
      await during();
    } finally {
      await admin.config('SET', 'requirepass', PASSWORD);
    }
  };

  it('is not ready while its subscriber connection cannot reconnect, though Redis answers, and ready again once it has', async () => {
    const opened = openLog(config, 'sub-down');
    try {
      await eventually(async () => (await readiness(opened.log)) === 'ready', 10_000, 'the log to be ready');
      await withPasswordChanged(async () => {
        expect(await cut('sub-down-subscriber')).toBe(1);
        const why = await eventually(
          async () => {
            const now = await readiness(opened.log);
            return now !== 'ready' && now;
          },
          10_000,
          'the log to say it is not ready',
        );
        expect(why).toMatch(/^the subscriber connection is (connecting|connect|reconnecting)$/);
        // Redis itself answers on the command connection meanwhile.
        expect(await (opened.commands as Redis).ping()).toBe('PONG');
        // Still down a while later: the state holds as long as the connection is not back.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await readiness(opened.log)).not.toBe('ready');
      });
      await eventually(async () => (await readiness(opened.log)) === 'ready', 10_000, 'the log to be ready again');
    } finally {
      await opened.close();
    }
  });

  it('is not ready while its command connection reconnects; a read and an append asked meanwhile wait for it', async () => {
    const opened = openLog(config, 'cmd-down');
    const commands = opened.commands as Redis;
    try {
      await eventually(async () => (await readiness(opened.log)) === 'ready', 10_000, 'the log to be ready');
      const id = uniqueId('reconnect');
      await opened.log.create({ correlationId: id, input: null, owner: 'alice' });

      const reconnecting = once(commands, 'reconnecting');
      expect(await cut('cmd-down-commands')).toBe(1);
      // ioredis connects again a moment after it says so: both are asked before that.
      await reconnecting;
      expect(await readiness(opened.log)).toBe('the command connection is reconnecting');
      const read = opened.log.get(id);
      const append = opened.log.append([incoming(id, { sequence: 1 })]);
      // Both went out once the connection was back.
      expect((await read)?.owner).toBe('alice');
      expect((await append).map((result) => result.outcome)).toEqual(['inserted']);
      expect(await readiness(opened.log)).toBe('ready');
    } finally {
      await opened.close();
    }
  });

  it('answers STORE_UNAVAILABLE once the wait is over when the command connection does not come back', async () => {
    const opened = openLog(config, 'cmd-gone');
    try {
      await eventually(async () => (await readiness(opened.log)) === 'ready', 10_000, 'the log to be ready');
      await withPasswordChanged(async () => {
        const reconnecting = once(opened.commands, 'reconnecting');
        expect(await cut('cmd-gone-commands')).toBe(1);
        await reconnecting;
        const asked = Date.now();
        await expect(opened.log.get(uniqueId('gone'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
        await expect(opened.log.append([incoming(uniqueId('gone'), { sequence: 1 })])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
        // Bounded (a second each), however long the connection stays away.
        expect(Date.now() - asked).toBeLessThan(10_000);
        expect(await readiness(opened.log)).toMatch(/^the command connection is /);
      });
      await eventually(async () => (await readiness(opened.log)) === 'ready', 10_000, 'the log to be ready again');
    } finally {
      await opened.close();
    }
  });
});

describe('readiness on a Redis Cluster', () => {
  afterAll(stopRedisShapes, 60_000);

  it("is not ready until the service's own cluster client is, nor while it reconnects, and ready once it is", { timeout: 90_000 }, async () => {
    const shape = await openRedisShape('cluster');
    const opened = openLog(loadConfig(shape.env).redis, `cluster-ready-${process.pid}`);
    const clients = [opened.commands, opened.subscriber];
    const allReady = () => clients.every((client) => client.status === 'ready');
    /** Asks the log again and again until `until` holds; answers the answers that said ready with a client not ready. */
    const probe = async (until: () => boolean) => {
      const wrong: string[] = [];
      for (let asked = 0; !until() || asked === 0; asked++) {
        if ((await readiness(opened.log)) === 'ready' && !allReady()) wrong.push(clients.map((client) => client.status).join('/'));
        await new Promise((resolve) => setImmediate(resolve));
      }
      return wrong;
    };
    try {
      // From the moment the clients are created until both are ready.
      expect(await probe(allReady)).toEqual([]);
      await eventually(async () => (await readiness(opened.log)) === 'ready', 30_000, 'the log to be ready');

      // The command client connects again from its seed nodes, as ioredis does by itself when its
      // ready check finds the cluster failing.
      (opened.commands as Cluster).disconnect(true);
      expect(await readiness(opened.log)).toMatch(/^the command connection is /);
      expect(await probe(allReady)).toEqual([]);
      await eventually(async () => (await readiness(opened.log)) === 'ready', 30_000, 'the log to be ready again');
    } finally {
      await opened.close();
      await shape.close();
    }
  });

  it('connects to a cluster that takes more than a second to name its slots (a loaded or distant one)', { timeout: 60_000 }, async () => {
    const shape = await openRedisShape('cluster');
    const seeds = shape.cluster?.seeds ?? [];
    // Every seed answers 1.2 s late: a refresh's two answers (its connection's handshake, then
    // CLUSTER SLOTS) take 2.4 s, past ioredis' own 1 s, within a command's time for each.
    const proxies = await Promise.all(seeds.map((seed) => startTcpProxy(Number(seed.split(':').at(-1)), { latencyMs: 1_200 })));
    const env = { ...shape.env, REDIS_CLUSTER_NODES: proxies.map((proxy) => new URL(proxy.url).host).join(',') };
    const client = createRedisConnection(loadConfig(env).redis, createSilentLogger(), `slow-seeds-${process.pid}`);
    try {
      await eventually(() => client.status === 'ready', 30_000, 'the cluster client to be ready');
      // The slots it learnt name the nodes themselves: commands go there, at full speed.
      const key = `${prefix}-slow-seeds`;
      await client.set(key, 'named', 'EX', 60);
      expect(await client.get(key)).toBe('named');
    } finally {
      client.disconnect();
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await shape.close();
    }
  });
});
