import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { configError } from '../../support/config-error.js';

const redis = { STATE_STORE: 'redis' };

describe('REDIS_MODE and its settings', () => {
  it('is standalone by default, as before', () => {
    expect(loadConfig(redis).redis.topology).toEqual({ mode: 'standalone' });
  });

  it('reads the seed nodes of a Redis Cluster, IPv6 included, and keeps REDIS_URL for TLS and credentials', () => {
    const config = loadConfig({
      ...redis,
      REDIS_MODE: 'cluster',
      REDIS_CLUSTER_NODES: 'node-1:7000, 10.0.0.2:7001,[::1]:7002',
      REDIS_URL: 'rediss://:pw@cluster',
    }).redis;
    expect(config.topology).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'node-1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(config.url).toBe('rediss://:pw@cluster');
  });

  it("reads the sentinels, the master name and the sentinels' own credentials", () => {
    const config = loadConfig({
      ...redis,
      REDIS_MODE: 'sentinel',
      REDIS_SENTINELS: 's1:26379,s2:26379',
      REDIS_SENTINEL_MASTER_NAME: 'results',
      REDIS_SENTINEL_USERNAME: 'watch',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    }).redis;
    expect(config.topology).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      masterName: 'results',
      sentinelUsername: 'watch',
      sentinelPassword: 'sentinel-secret',
    });
  });

  it("names the variable of each mistake, and never repeats the sentinels' password", () => {
    expect(configError({ ...redis, REDIS_MODE: 'shards' }).message).toMatch(/^REDIS_MODE: expected one of standalone, cluster, sentinel/);
    expect(configError({ ...redis, REDIS_MODE: 'cluster' }).message).toMatch(/^REDIS_CLUSTER_NODES: is required with REDIS_MODE=cluster/);
    expect(configError({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1' }).message).toMatch(
      /^REDIS_CLUSTER_NODES: "node-1" is not a valid host:port/,
    );
    expect(configError({ ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:70000' }).message).toMatch(
      /^REDIS_CLUSTER_NODES: "node-1:70000" has no valid port/,
    );
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
    expect(loadConfig(cluster).redis.wait).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(loadConfig(sentinel).redis.wait).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(loadConfig(redis).redis.wait).toEqual({ replicas: 0, timeoutMs: 1000 });
    expect(loadConfig({ ...redis, REDIS_MODE: 'standalone' }).redis.wait.replicas).toBe(0);
  });

  it('takes an explicit REDIS_WAIT_REPLICAS over the default of the mode, 0 included', () => {
    const cluster = { ...redis, REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'node-1:7000' };
    expect(loadConfig({ ...cluster, REDIS_WAIT_REPLICAS: '0' }).redis.wait.replicas).toBe(0);
    expect(loadConfig({ ...cluster, REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '250' }).redis.wait).toEqual({ replicas: 2, timeoutMs: 250 });
    expect(loadConfig({ ...redis, REDIS_WAIT_REPLICAS: '1' }).redis.wait.replicas).toBe(1);
    // A blank value is unset: the mode's default.
    expect(
      loadConfig({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER_NAME: 'results', REDIS_WAIT_REPLICAS: ' ' }).redis.wait
        .replicas,
    ).toBe(1);
    expect(configError({ ...cluster, REDIS_WAIT_REPLICAS: '-1' }).message).toMatch(/^REDIS_WAIT_REPLICAS: must be at least 0/);
  });

  it('does not wait with the state in memory, whatever REDIS_MODE says', () => {
    expect(loadConfig({ STATE_STORE: 'memory' }).redis.wait.replicas).toBe(0);
  });

  it('is read once, in config.redis, for every part whose store is Redis, and checked only when one is', () => {
    expect(loadConfig({ ...redis, REDIS_KEY_PREFIX: 'p', REDIS_URL: 'redis://r:6380' }).redis).toMatchObject({
      url: 'redis://r:6380',
      keyPrefix: 'p',
      topology: { mode: 'standalone' },
    });
    // Nothing in Redis: a mistake in a setting no part uses does not stop the process.
    expect(loadConfig({ STATE_STORE: 'memory', REDIS_MODE: 'cluster' }).redis.topology).toEqual({ mode: 'standalone' });
    // The rate limits alone in Redis: the Redis settings are checked.
    expect(configError({ STATE_STORE: 'memory', RATE_LIMITS_STORE: 'redis', REDIS_MODE: 'cluster' }).message).toMatch(/^REDIS_CLUSTER_NODES: is required/);
    expect(configError({ STATE_STORE: 'memory', OIDC_STORE: 'redis', REDIS_URL: 'http://x' }).message).toMatch(
      /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL/,
    );
  });

  it('is a CONFIG_INVALID error (exit 78) that carries the variable', () => {
    expect(configError({ ...redis, REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379' })).toMatchObject({
      code: 'CONFIG_INVALID',
      variable: 'REDIS_SENTINEL_MASTER_NAME',
    });
  });
});

describe('the store of each part', () => {
  it('follows STATE_STORE by default: Redis for the rate limits and the issuer where the results are in Redis', () => {
    expect(loadConfig(redis).rateLimits.store).toBe('redis');
    expect(loadConfig(redis).issuer.store).toBe('redis');
    for (const state of ['memory', 'replicated']) {
      const config = loadConfig({ STATE_STORE: state, INSTANCE_ID: 'a' });
      expect([config.rateLimits.store, config.issuer.store]).toEqual(['memory', 'memory']);
    }
  });

  it('is chosen for each part on its own: RATE_LIMITS_STORE and OIDC_STORE', () => {
    expect(loadConfig({ ...redis, RATE_LIMITS_STORE: 'memory' })).toMatchObject({
      resultLog: { kind: 'redis' },
      rateLimits: { store: 'memory' },
      issuer: { store: 'redis' },
    });
    expect(loadConfig({ ...redis, OIDC_STORE: 'memory' })).toMatchObject({ rateLimits: { store: 'redis' }, issuer: { store: 'memory' } });
    expect(loadConfig({ STATE_STORE: 'memory', RATE_LIMITS_STORE: 'redis', OIDC_STORE: 'redis' })).toMatchObject({
      resultLog: { kind: 'memory' },
      rateLimits: { store: 'redis' },
      issuer: { store: 'redis' },
    });
    expect(configError({ RATE_LIMITS_STORE: 'postgres' }).message).toMatch(/^RATE_LIMITS_STORE: expected one of memory, redis/);
    expect(configError({ OIDC_STORE: 'disk' }).message).toMatch(/^OIDC_STORE: expected one of memory, redis/);
  });
});
