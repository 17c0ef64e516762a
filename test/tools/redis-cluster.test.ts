/**
 * The Redis topology helpers (tools/redis/) with real redis-server processes: a 3+3 cluster whose
 * killed primary is failed over to its replica and comes back as a replica, a paused primary
 * failed over and resumed, and a Sentinel set whose killed primary is replaced while a Sentinel
 * client keeps writing; a password-protected cluster. The measured failover times are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, startRedisSentinel, type RedisCluster, type RedisNode, type RedisSentinelSet } from '../../tools/redis/redis-cluster.js';
import { eventually } from '../support/graphql.js';

/** A failover with a 2 s node timeout takes a few seconds; the bound leaves room for a loaded machine. */
const FAILOVER_BOUND_MS = 20_000;

function hostPort(address: string): { host: string; port: number } {
  const [host = '', port = ''] = address.split(':');
  return { host, port: Number(port) };
}

/** Reads a key from a replica itself (READONLY), to know a write has reached it before the primary dies. */
async function readFromReplica(replica: RedisNode, key: string): Promise<string | null> {
  const client = new Redis({ ...hostPort(replica.address), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.readonly();
    return await client.get(key);
  } finally {
    client.disconnect();
  }
}

/** Waits until `replica` reports itself master; returns the milliseconds since `since`. */
async function promoted(replica: RedisNode, since: number): Promise<number> {
  await eventually(async () => (await replica.role()) === 'master', FAILOVER_BOUND_MS, `${replica.address} to be promoted`);
  return Date.now() - since;
}

describe('startRedisCluster', { timeout: 60_000 }, () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.seeds.map(hostPort), { retryDelayOnFailover: 100, retryDelayOnClusterDown: 100, slotsRefreshTimeout: 1000 });
    client.on('error', () => undefined); // a killed node's connection errors; the reads below retry
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
    await cluster?.stop(); // safe twice
  });

  it('starts 3 primaries with a replica each, and serves keys of every slot through a cluster client', async () => {
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.seeds).toEqual(cluster.nodes.map((n) => n.address));
    // redis-cli makes the first nodes it is given the primaries.
    expect(await Promise.all(cluster.nodes.map((n) => n.role()))).toEqual(['master', 'master', 'master', 'slave', 'slave', 'slave']);
    for (let i = 0; i < 50; i++) await client.set(`k${i}`, `v${i}`);
    expect(await client.get('k49')).toBe('v49');
    const owners = new Set<RedisNode>();
    for (let i = 0; i < 50; i++) owners.add(await cluster.primaryOf(`k${i}`));
    expect(owners.size).toBe(3);
    // Keys under one hash tag share a slot, so one primary.
    expect(await cluster.primaryOf('{test-1}:log')).toBe(await cluster.primaryOf('{test-1}:dedup'));
  });

  it('fails a killed primary over to its replica, keeps its keys, and takes it back as a replica', async () => {
    const key = '{failover}:key';
    await client.set(key, 'before');
    const primary = await cluster.primaryOf(key);
    const replica = await cluster.replicaOf(primary);
    expect(await replica.role()).toBe('slave');
    await eventually(async () => (await readFromReplica(replica, key)) === 'before', 5_000, 'the write to reach the replica');

    const killedAt = Date.now();
    await primary.kill();
    const promotedMs = await promoted(replica, killedAt);
    expect(await cluster.primaryOf(key)).toBe(replica);
    expect(await eventually(() => client.get(key), FAILOVER_BOUND_MS, 'the key through the cluster client')).toBe('before');
    const readableMs = Date.now() - killedAt;
    await client.set(key, 'after');

    const restartAt = Date.now();
    await primary.restart();
    const rejoinMs = Date.now() - restartAt;
    expect(await primary.role()).toBe('slave');
    expect(await cluster.replicaOf(replica)).toBe(primary);
    await cluster.waitHealthy();
    process.stdout.write(
      `redis cluster: kill -9 of a primary -> replica promoted in ${promotedMs} ms, key readable through the client in ${readableMs} ms; restarted node rejoined as a replica in ${rejoinMs} ms\n`,
    );
    expect(await client.get(key)).toBe('after');
  });

  it('fails a paused primary over once it is silent past the node timeout, and demotes it when it resumes', async () => {
    const key = '{pause}:key';
    await client.set(key, 'kept');
    const primary = await cluster.primaryOf(key);
    const replica = await cluster.replicaOf(primary);
    await eventually(async () => (await readFromReplica(replica, key)) === 'kept', 5_000, 'the write to reach the replica');

    const pausedAt = Date.now();
    primary.pause();
    await expect(primary.role()).rejects.toThrow();
    const promotedMs = await promoted(replica, pausedAt);
    primary.resume();
    await eventually(async () => (await primary.role()) === 'slave', FAILOVER_BOUND_MS, 'the resumed primary to become a replica');
    await cluster.waitHealthy();
    process.stdout.write(`redis cluster: SIGSTOP of a primary -> replica promoted in ${promotedMs} ms; the resumed node is a replica\n`);
    expect(await eventually(() => client.get(key), FAILOVER_BOUND_MS, 'the key after the pause')).toBe('kept');
  });

  it('stops a node cleanly and restarts it', async () => {
    const replica = (await Promise.all(cluster.nodes.map(async (n) => ((await n.role()) === 'slave' ? n : undefined)))).find(
      (n) => n !== undefined,
    ) as RedisNode;
    await replica.stop();
    await expect(replica.role()).rejects.toThrow();
    await replica.restart();
    expect(await replica.role()).toBe('slave');
    await cluster.waitHealthy();
  });
});

describe('startRedisCluster with a password', { timeout: 60_000 }, () => {
  it('refuses clients without it and serves those with it', async () => {
    const cluster = await startRedisCluster({ replicasPerPrimary: 0, password: 'cluster-secret' });
    // RESP2 as the service speaks it (src/redis/redis-from-config.ts): the refusal is NOAUTH on the command.
    const plain = new Redis({
      ...hostPort(cluster.seeds[0] as string),
      protocol: 2,
      lazyConnect: true,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    plain.on('error', () => undefined);
    const client = new Cluster(cluster.seeds.map(hostPort), { redisOptions: { password: 'cluster-secret' } });
    try {
      await plain.connect();
      await expect(plain.get('k')).rejects.toThrow(/NOAUTH/);
      await client.set('k', 'v');
      expect(await client.get('k')).toBe('v');
      expect(await (await cluster.primaryOf('k')).role()).toBe('master');
    } finally {
      plain.disconnect();
      client.disconnect();
      await cluster.stop();
    }
  });
});

describe('startRedisSentinel', { timeout: 60_000 }, () => {
  let set: RedisSentinelSet;
  let client: Redis;

  beforeAll(async () => {
    set = await startRedisSentinel();
    client = new Redis({ sentinels: set.sentinels.map(hostPort), name: set.masterName, retryStrategy: () => 100, sentinelRetryStrategy: () => 100 });
    client.on('error', () => undefined); // the killed primary's connection errors; the writes below retry
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await set?.stop();
    await set?.stop();
  });

  it('replaces a killed primary with its replica; a Sentinel client reconnects and writes', async () => {
    expect(set.masterName).toBe('rcs');
    expect(set.sentinels).toHaveLength(3);
    const primary = await set.primary();
    expect(primary).toBe(set.nodes[0]);
    await client.set('before', '1');
    // Acknowledged by the replica before the primary dies, so the failover keeps it.
    expect(await client.wait(1, 2000)).toBe(1);

    const killedAt = Date.now();
    await primary.kill();
    const replica = set.nodes[1] as RedisNode;
    const promotedMs = await promoted(replica, killedAt);
    expect(
      await eventually(async () => ((await set.primary()) === replica ? replica : undefined), FAILOVER_BOUND_MS, 'the sentinels to name the replica'),
    ).toBe(replica);
    await eventually(async () => (await client.set('after', '2')) === 'OK', FAILOVER_BOUND_MS, 'a write through the Sentinel client');
    const writableMs = Date.now() - killedAt;
    expect(await client.get('before')).toBe('1');
    process.stdout.write(
      `redis sentinel: kill -9 of the primary -> replica promoted in ${promotedMs} ms, writes through the Sentinel client again after ${writableMs} ms\n`,
    );

    const restartAt = Date.now();
    await primary.restart();
    expect(await primary.role()).toBe('slave');
    await set.waitHealthy();
    process.stdout.write(`redis sentinel: the old primary came back as a replica in ${Date.now() - restartAt} ms\n`);
  });
});
