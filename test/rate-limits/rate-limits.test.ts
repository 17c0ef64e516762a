/**
 * The rate-limit contract, run over every implementation: in memory, and in the real Redis (two
 * instances on one prefix stand for two replicas). The Redis one also keeps counting, per process,
 * while Redis cannot be reached.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type RateLimitConfig } from '../../src/config/config.js';
import { createMemoryRateLimits } from '../../src/rate-limits/memory-rate-limits.js';
import type { RateLimits } from '../../src/rate-limits/rate-limits.js';
import { createRedisRateLimits } from '../../src/rate-limits/redis-rate-limits.js';
import { createLogger } from '../../src/base/logger.js';
import { createRedisConnection } from '../../src/redis/redis-from-config.js';
import { eventually } from '../support/graphql.js';
import { deleteRedisKeys } from '../support/redis-keys.js';

const config: RateLimitConfig = { enabled: true, store: 'redis', perMinute: { api: 3, subscribe: 2, wsConnect: 1, auth: 2 } };
const logger = createLogger({ level: 'silent' });
const prefix = `rl-contract-${randomUUID().slice(0, 8)}`;
const store = loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: prefix }).redis;
const connections = [createRedisConnection(store, logger, 'test-a'), createRedisConnection(store, logger, 'test-b')];

// Without an offline queue, a command sent before the connection is ready fails (and the limiter
// counts in memory instead): the shared-budget checks start once both are connected.
beforeAll(() => eventually(() => connections.every((redis) => redis.status === 'ready'), 5000, 'Redis connections'));

afterAll(async () => {
  await deleteRedisKeys(`${prefix}:*`);
  await Promise.all(connections.map((redis) => redis.quit()));
});

/** Consumes `n` times and returns how many were allowed. */
async function allowedOf(limits: RateLimits, bucket: 'api' | 'subscribe' | 'wsConnect' | 'auth', key: string, n: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < n; i += 1) if ((await limits.consume(bucket, key)).allowed) allowed += 1;
  return allowed;
}

function contract(name: string, create: () => RateLimits) {
  describe(`rate limits contract: ${name}`, () => {
    it('allows the budget per minute, then refuses with the time until there is room again', async () => {
      const limits = create();
      const key = randomUUID();
      expect(await allowedOf(limits, 'api', key, 3)).toBe(3);
      const refused = await limits.consume('api', key);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    });

    it('keeps a budget per key and per bucket', async () => {
      const limits = create();
      const key = randomUUID();
      expect(await allowedOf(limits, 'auth', key, 5)).toBe(2);
      expect(await allowedOf(limits, 'auth', randomUUID(), 5)).toBe(2);
      expect(await allowedOf(limits, 'subscribe', key, 5)).toBe(2);
      expect(await allowedOf(limits, 'wsConnect', key, 5)).toBe(1);
    });
  });
}

contract('memory', () => createMemoryRateLimits(config));
contract('redis', () => createRedisRateLimits({ config, redis: connections[0]!, prefix }));

describe('redis rate limits', () => {
  it('share one budget between instances on one prefix', async () => {
    const [a, b] = connections.map((redis) => createRedisRateLimits({ config, redis, prefix }));
    const key = randomUUID();
    expect(await allowedOf(a!, 'api', key, 2)).toBe(2);
    expect(await allowedOf(b!, 'api', key, 1)).toBe(1);
    expect((await a!.consume('api', key)).allowed).toBe(false);
    expect((await b!.consume('api', key)).allowed).toBe(false);
  });

  it('keep counting in the process while Redis cannot be reached', async () => {
    const down = createRedisConnection(loadConfig({ STATE_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:1' }).redis, logger, 'test-down');
    try {
      const limits = createRedisRateLimits({ config, redis: down, prefix });
      expect(await allowedOf(limits, 'api', randomUUID(), 5)).toBe(3);
    } finally {
      down.disconnect();
    }
  });
});
