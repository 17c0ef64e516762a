/**
 * Builds the rate limits of a process from its configuration (see src/rate-limits/), on a Redis
 * connection of their own when their store is Redis (`RATE_LIMITS_STORE`).
 */
import type { RateLimitConfig } from '../config/config.js';
import type { RedisConfig } from '../config/redis.js';
import { disposeOnce, type Disposable } from '../process/disposable.js';
import type { Logger } from '../base/logger.js';
import { createMemoryRateLimits } from '../rate-limits/memory-rate-limits.js';
import { NO_RATE_LIMITS, type RateLimits } from '../rate-limits/rate-limits.js';
import { createRedisRateLimits } from '../rate-limits/redis-rate-limits.js';
import { createRedisConnection } from '../redis/redis-from-config.js';

/** The rate limits of one process, with the connection they own (if any). */
export interface ConfiguredRateLimits extends Disposable {
  readonly rateLimits: RateLimits;
}

/**
 * Creates the configured rate limits: none when `RATE_LIMITS=off`, in Redis (on a connection of
 * their own) when their store is Redis so that replicas share each budget, in memory otherwise.
 */
export function createRateLimitsFromConfig(limits: RateLimitConfig, redisConfig: RedisConfig, logger: Logger): ConfiguredRateLimits {
  if (!limits.enabled) return { rateLimits: NO_RATE_LIMITS, dispose: async () => {} };
  if (limits.store !== 'redis') return { rateLimits: createMemoryRateLimits(limits), dispose: async () => {} };
  const redis = createRedisConnection(redisConfig, logger, 'rate-limits');
  return {
    rateLimits: createRedisRateLimits({ config: limits, redis, prefix: redisConfig.keyPrefix }),
    dispose: disposeOnce(async () => {
      await redis.quit().then(
        () => undefined,
        () => undefined,
      );
    }),
  };
}
