/**
 * The rate-limit seam: budgets of requests per key (a principal or a client IP) per minute. The
 * memory implementation counts in this process; the Redis one counts in Redis, so replicas that
 * share a Redis share every budget.
 */

/**
 * What is counted. `api`: `/graphql` and `/tests` requests per principal. `subscribe`: GraphQL
 * operations started over WebSocket or SSE per principal. `wsConnect`: new WebSocket connections per
 * principal. `auth`: token endpoint and login form POSTs per client IP.
 */
export type RateLimitBucket = 'api' | 'subscribe' | 'wsConnect' | 'auth';

/** Every bucket, in a fixed order. */
export const RATE_LIMIT_BUCKETS: readonly RateLimitBucket[] = ['api', 'subscribe', 'wsConnect', 'auth'];

/** The answer to one request for budget. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** When refused: how long until the budget has room again (0 when allowed). */
  readonly retryAfterMs: number;
}

/** Budgets per bucket and key. */
export interface RateLimits {
  /** Takes one unit of `key`'s budget in `bucket`, if there is one left. */
  consume(bucket: RateLimitBucket, key: string): Promise<RateLimitDecision>;
}

/** Rate limits turned off (`RATE_LIMITS=off`): everything is allowed. */
export const NO_RATE_LIMITS: RateLimits = {
  consume: () => Promise.resolve({ allowed: true, retryAfterMs: 0 }),
};

/** Whole seconds for a `Retry-After` header or an error's `retryAfterSeconds`: at least 1. */
export function retryAfterSeconds(decision: RateLimitDecision): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}
