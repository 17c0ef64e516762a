import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { configError } from '../../support/config-error.js';

const redis = { STATE_STORE: 'redis' };

describe('REDIS_MODE and its settings', () => {
  it('is standalone by default, as before', () => {
    expect(loadConfig(redis).resultLog.redisTopology).toEqual({ mode: 'standalone' });
  });

  it('reads the seed nodes of a Redis Cluster, IPv6 included, and keeps REDIS_URL for TLS and credentials', () => {
    const config = loadConfig({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:7000, 10.0.0.2:7001,[::1]:7002', REDIS_URL: 'rediss://:pw@cluster' }).resultLog;
    expect(config.redisTopology).toEqual({ mode: 'cluster', nodes: [{ host: 'node-1', port: 7000 }, { host: '10.0.0.2', port: 7001 }, { host: '::1', port: 7002 }] });
    expect(config.redisUrl).toBe('rediss://:pw@cluster');
  });

  it('reads the sentinels, the master name and the sentinels\' own credentials', () => {
    const config = loadConfig({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_MASTER_NAME: 'results', REDIS_SENTINEL_USERNAME: 'watch', REDIS_SENTINEL_PASSWORD: 'sentinel-secret' }).resultLog;
    expect(config.redisTopology).toEqual({ mode: 'sentinel', sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }], masterName: 'results', sentinelUsername: 'watch', sentinelPassword: 'sentinel-secret' });
  });

  it('names the variable of each mistake, and never repeats the sentinels\' password', () => {
    expect(configError({ ...redis, REDIS_MODE: 'shards' }).message).toMatch(/^REDIS_MODE: expected one of standalone, cluster, sentinel/);
    expect(configError({ ...redis, REDIS_MODE: 'cluster' }).message).toMatch(/^REDIS_CLUSTER_NODES: is required with REDIS_MODE=cluster/);
    expect(configError({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1' }).message).toMatch(/^REDIS_CLUSTER_NODES: "node-1" is not a valid host:port/);
    expect(configError({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:70000' }).message).toMatch(/^REDIS_CLUSTER_NODES: "node-1:70000" has no valid port/);
    expect(configError({ ...redis, REDIS_CLUSTER_NODES: 'node-1:7000' }).message).toMatch(/^REDIS_CLUSTER_NODES: is set, but REDIS_MODE is not cluster/);
    expect(configError({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379' }).message).toMatch(/^REDIS_SENTINEL_MASTER_NAME: is required/);
    expect(configError({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINEL_MASTER_NAME: 'results' }).message).toMatch(/^REDIS_SENTINELS: is required/);
    const leaked = configError({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'n:1', REDIS_SENTINEL_PASSWORD: 'sentinel-secret' });
    expect(leaked.message).toMatch(/^REDIS_SENTINEL_PASSWORD: is set, but REDIS_MODE is not sentinel/);
    expect(leaked.message).not.toContain('sentinel-secret');
  });

  it('waits for one replica by default where Redis fails over (Cluster, Sentinel), for none on one node', () => {
    const cluster = { ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:7000' };
    const sentinel = { ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER_NAME: 'results' };
    expect(loadConfig(cluster).resultLog.redisWait).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(loadConfig(sentinel).resultLog.redisWait).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(loadConfig(redis).resultLog.redisWait).toEqual({ replicas: 0, timeoutMs: 1000 });
    expect(loadConfig({ ...redis, REDIS_MODE: 'standalone' }).resultLog.redisWait.replicas).toBe(0);
  });

  it('takes an explicit REDIS_WAIT_REPLICAS over the default of the mode, 0 included', () => {
    const cluster = { ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:7000' };
    expect(loadConfig({ ...cluster, REDIS_WAIT_REPLICAS: '0' }).resultLog.redisWait.replicas).toBe(0);
    expect(loadConfig({ ...cluster, REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '250' }).resultLog.redisWait).toEqual({ replicas: 2, timeoutMs: 250 });
    expect(loadConfig({ ...redis, REDIS_WAIT_REPLICAS: '1' }).resultLog.redisWait.replicas).toBe(1);
    // A blank value is unset: the mode's default.
    expect(loadConfig({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER_NAME: 'results', REDIS_WAIT_REPLICAS: ' ' }).resultLog.redisWait.replicas).toBe(1);
    expect(configError({ ...cluster, REDIS_WAIT_REPLICAS: '-1' }).message).toMatch(/^REDIS_WAIT_REPLICAS: must be at least 0/);
  });

  it('does not wait with the state in memory, whatever REDIS_MODE says', () => {
    expect(loadConfig({ STATE_STORE: 'memory' }).resultLog.redisWait.replicas).toBe(0);
  });

  it('is a CONFIG_INVALID error (exit 78) that carries the variable', () => {
    expect(configError({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379' })).toMatchObject({ code: 'CONFIG_INVALID', variable: 'REDIS_SENTINEL_MASTER_NAME' });
  });
});
