/** Rate limits counted in this process (rate-limiter-flexible's memory limiter). */
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config/config.js';
import { RATE_LIMIT_BUCKETS, type RateLimitBucket, type RateLimits } from './rate-limits.js';

/** Creates per-process rate limits with the configured budgets per minute. */
export function createMemoryRateLimits(config: RateLimitConfig): RateLimits {
  return limitsFrom((bucket) => new RateLimiterMemory({ keyPrefix: bucket, points: config.perMinute[bucket], duration: 60 }));
}

/**
 * Adapts one rate-limiter-flexible limiter per bucket to the seam. The library rejects with a
 * `RateLimiterRes` when the budget is spent, and with an Error when its store fails.
 */
export function limitsFrom(create: (bucket: RateLimitBucket) => RateLimiterAbstract): RateLimits {
  const limiters = new Map(RATE_LIMIT_BUCKETS.map((bucket) => [bucket, create(bucket)]));
  return {
    async consume(bucket, key) {
      try {
        await limiters.get(bucket)!.consume(key);
        return { allowed: true, retryAfterMs: 0 };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return { allowed: false, retryAfterMs: rejection.msBeforeNext };
        throw rejection;
      }
    },
  };
}
