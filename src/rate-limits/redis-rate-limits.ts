/**
 * Rate limits counted in Redis (rate-limiter-flexible's Redis limiter, one atomic script per
 * request), so every replica that shares the Redis shares each budget.
 */
import type { RedisClient } from '../redis/redis-client.js';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config/config.js';
import { limitsFrom } from './memory-rate-limits.js';
import type { RateLimits } from './rate-limits.js';

/** Options of {@link createRedisRateLimits}. */
export interface RedisRateLimitsOptions {
  readonly config: RateLimitConfig;
  readonly redis: RedisClient;
  /** Prefix of the keys (the deployment's `REDIS_KEY_PREFIX`). */
  readonly prefix: string;
}

/** Creates rate limits shared through Redis. */
export function createRedisRateLimits(options: RedisRateLimitsOptions): RateLimits {
  const { config, redis, prefix } = options;
  return limitsFrom((bucket) => {
    const points = config.perMinute[bucket];
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:ratelimit:${bucket}`,
      points,
      duration: 60,
      // While Redis fails, each process keeps counting on its own rather than letting everything
      // through (or refusing everything): the budget holds per replica until Redis is back.
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: bucket, points, duration: 60 }),
    });
  });
}
