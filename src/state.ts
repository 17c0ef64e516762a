/**
 * Builds the state side of a process from its configuration: the result log, in memory or in
 * Redis, with the Redis connections it needs (owned and closed here).
 */
import { Redis } from 'ioredis';
import type { RateLimitConfig, StoreConfig } from './config/config.js';
import type { Disposable } from './lifecycle/disposable.js';
import { disposeOnce } from './lifecycle/disposable.js';
import type { Logger } from './logger.js';
import { createMemoryResultLog } from './log/memory-result-log.js';
import { createRedisResultLog } from './log/redis-result-log.js';
import type { ResultLog } from './log/result-log.js';
import { createMemoryRateLimits } from './rate-limits/memory-rate-limits.js';
import { NO_RATE_LIMITS, type RateLimits } from './rate-limits/rate-limits.js';
import { createRedisRateLimits } from './rate-limits/redis-rate-limits.js';

/** The result log of one process. */
export interface State extends Disposable {
  readonly log: ResultLog;
  /** Tests held in this process, when the state is held here (memory modes). */
  readonly storedTests?: () => number;
  /** Closes the log, then its connections (after the service has stopped using them). Safe to call twice. */
  dispose(): Promise<void>;
}

/** Creates the configured state. Redis connections are opened in the background. */
export function createState(config: StoreConfig, logger: Logger): State {
  if (config.kind === 'memory' || config.kind === 'replicated') {
    const log = createMemoryResultLog(config);
    return { log, storedTests: () => log.size, dispose: () => log.dispose() };
  }
  const commands = createRedisConnection(config, logger, 'commands');
  // ioredis re-subscribes its channels by itself after a reconnect; the log re-reads what it missed.
  const subscriber = createRedisConnection(config, logger, 'subscriber');
  const log = createRedisResultLog({ redis: commands, subscriber, ttlSeconds: config.ttlSeconds, maxMessagesPerTest: config.maxMessagesPerTest, prefix: config.redisKeyPrefix, logger });
  return {
    log,
    dispose: disposeOnce(async () => {
      await log.dispose();
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    }),
  };
}

/** The rate limits of one process, with the connection they own (if any). */
export interface RateLimitState extends Disposable {
  readonly rateLimits: RateLimits;
}

/**
 * Creates the configured rate limits: none when `RATE_LIMITS=off`, in Redis (on a connection of
 * their own) with the Redis state so that replicas share each budget, in memory otherwise.
 */
export function createRateLimitState(limits: RateLimitConfig, store: StoreConfig, logger: Logger): RateLimitState {
  if (!limits.enabled) return { rateLimits: NO_RATE_LIMITS, dispose: async () => {} };
  if (store.kind !== 'redis') return { rateLimits: createMemoryRateLimits(limits), dispose: async () => {} };
  const redis = createRedisConnection(store, logger, 'rate-limits');
  return {
    rateLimits: createRedisRateLimits({ config: limits, redis, prefix: store.redisKeyPrefix }),
    dispose: disposeOnce(async () => {
      await redis.quit().then(() => undefined, () => undefined);
    }),
  };
}

/**
 * Opens one Redis connection as every part of the service uses it: no offline queue, so while
 * Redis is down commands fail at once (503 for reads, the consumer stops committing) instead of
 * piling up in memory; a command timeout, so a Redis that hangs (rather than refusing) does not
 * hang requests; `rediss://` turns TLS on (ioredis reads it, and the credentials, from the URL),
 * and a private CA replaces the public ones.
 */
export function createRedisConnection(config: StoreConfig, logger: Logger, role: string): Redis {
  const tls = config.redisTlsCa === null ? {} : { tls: { ca: config.redisTlsCa } };
  const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2000, connectionName: `rcs-${role}`, ...tls });
  const log = logger.child({ component: 'redis' });
  client.on('error', (error: Error) => log.warn({ role, err: error.message }, 'redis connection error'));
  return client;
}
