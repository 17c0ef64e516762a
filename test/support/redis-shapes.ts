/**
 * The three Redis shapes the service runs on, for suites that run once per shape
 * (`describe.each(REDIS_SHAPES)`): the machine's Redis (standalone), a 3-primary, 3-replica Redis
 * Cluster, and a Sentinel set (a primary, a replica, three sentinels), the last two started on free
 * ports by tools/redis and shared by the suites of one test file. Connections are opened the way
 * the service opens them (createRedisConnection), and handed out once ready.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/config.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createRedisConnection, type RedisUse } from '../../src/redis/redis-from-config.js';
import { clusterEnv, sentinelEnv, startRedisCluster, startRedisSentinel, type RedisCluster, type RedisSentinelSet } from '../../tools/redis/redis-cluster.js';

/** The shapes, by name. */
export const REDIS_SHAPES = ['standalone', 'cluster', 'sentinel'] as const;
export type RedisShapeName = (typeof REDIS_SHAPES)[number];

/** One running shape. */
export interface RedisShape {
  readonly name: RedisShapeName;
  /** The service's settings for it (`STATE_STORE=redis` and the mode's own). */
  readonly env: Readonly<Record<string, string>>;
  /** The cluster, for the cluster shape (faults, the primary of a key). */
  readonly cluster?: RedisCluster;
  /** The Sentinel set, for the sentinel shape. */
  readonly sentinel?: RedisSentinelSet;
  /** A connection as the service opens it (`rcs-<role>`), once it is ready; closed by `close()`. */
  connect(role: string, use?: RedisUse): Promise<RedisClient>;
  /** Kills every connection named `rcs-<role>` (or a sharded subscriber of it) on every data node; answers how many. */
  killConnections(role: string): Promise<number>;
  /** Closes the connections handed out. The cluster and the Sentinel set stay up for other suites. */
  close(): Promise<void>;
}

const started = new Map<
  RedisShapeName,
  Promise<{ env: Record<string, string>; cluster?: RedisCluster; sentinel?: RedisSentinelSet; ports: () => Promise<number[]> }>
>();

/** Starts the topology of `name` once per test file (stopped by stopRedisShapes). */
function topology(name: RedisShapeName) {
  let found = started.get(name);
  if (found !== undefined) return found;
  if (name === 'standalone') {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    found = Promise.resolve({ env: { STATE_STORE: 'redis', REDIS_URL: url }, ports: async () => [Number(new URL(url).port || 6379)] });
  } else if (name === 'cluster') {
    found = startRedisCluster().then((cluster) => ({ env: clusterEnv(cluster), cluster, ports: async () => cluster.nodes.map((node) => node.port) }));
  } else {
    found = startRedisSentinel().then((sentinel) => ({ env: sentinelEnv(sentinel), sentinel, ports: async () => sentinel.nodes.map((node) => node.port) }));
  }
  started.set(name, found);
  return found;
}

/** Opens the shape `name` (starting its topology the first time). */
export async function openRedisShape(name: RedisShapeName): Promise<RedisShape> {
  const { env, cluster, sentinel, ports } = await topology(name);
  const config = loadConfig(env).redis;
  const clients: RedisClient[] = [];
  return {
    name,
    env,
    ...(cluster ? { cluster } : {}),
    ...(sentinel ? { sentinel } : {}),
    async connect(role, use) {
      const client = createRedisConnection(config, createSilentLogger(), role, use);
      clients.push(client);
      // The service's connections have no offline queue: a command before `ready` fails at once.
      if ((client as Redis).status !== 'ready') await once(client, 'ready');
      return client;
    },
    async killConnections(role) {
      let killed = 0;
      for (const port of await ports()) {
        const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        admin.on('error', () => undefined);
        try {
          await admin.connect();
          const lines = String(await admin.client('LIST')).split('\n');
          const named = new RegExp(` name=(?:\\S*:)?rcs-${role} `);
          for (const line of lines.filter((entry) => named.test(entry))) {
            const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
            if (id !== undefined) killed += Number(await admin.client('KILL', 'ID', id));
          }
        } catch {
          // A node that is down holds no connection to kill.
        } finally {
          admin.disconnect();
        }
      }
      return killed;
    },
    async close() {
      await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}

/** Stops the topologies this file started (in an afterAll). */
export async function stopRedisShapes(): Promise<void> {
  const running = [...started.values()];
  started.clear();
  await Promise.all(
    running.map(async (shape) => {
      const { cluster, sentinel } = await shape;
      await cluster?.stop();
      await sentinel?.stop();
    }),
  );
}
