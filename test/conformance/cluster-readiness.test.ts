/**
 * The store's readiness check on a Redis Cluster from the moment a primary is killed: its
 * connection ends and leaves the client's pool at once, while its slots stay its own until the
 * cluster fails it over (`cluster-node-timeout`, 2 s here). Pinging the pool and asking the
 * cluster's view both answered ready through that window; the check also holds the client's slot
 * map against its pool.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRedis } from '../../src/redis/redis-health.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { eventually } from '../support/graphql.js';
import { openRedisShape, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';

let shape: RedisShape;
let client: RedisClient;

beforeAll(async () => {
  shape = await openRedisShape('cluster');
  client = await shape.connect('readiness-check');
}, 120_000);

afterAll(async () => {
  await shape?.close();
  await stopRedisShapes();
});

describe('readiness on a Redis Cluster', { timeout: 120_000 }, () => {
  it('is refused from the moment a primary is killed until its replica serves its slots', async () => {
    const cluster = shape.cluster;
    if (cluster === undefined) throw new Error('no cluster');
    await checkRedis(client);
    const key = `readiness-${Date.now()}`;
    const victim = await cluster.primaryOf(key);
    const pooled = () => (client as Cluster).nodes('master').some((node) => node.options.port === victim.port);
    expect(pooled()).toBe(true);
    await victim.kill();
    // Its connection ends and the client drops it, well before the cluster flags it as failing.
    await eventually(() => !pooled(), 1500, 'the client to drop the killed primary');
    // Refused (on a machine slow enough to pass node-timeout first, the cluster's own view refuses too).
    await expect(checkRedis(client)).rejects.toThrow(/primary|slots/);
    await victim.restart();
    await cluster.waitHealthy(60_000);
    await eventually(
      () =>
        checkRedis(client).then(
          () => true,
          () => false,
        ),
      60_000,
      'ready again once the replica serves the slots',
    );
  });
});
