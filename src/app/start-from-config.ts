/**
 * Builds and starts a whole service process from its configuration: state, broker side, auth (for
 * the roles that serve the API).
 * The process entry point and the benchmarks start the service the same way through this.
 */
import { createAuth } from '../auth/create-auth.js';
import type { EmbeddedAuthOptions } from '../auth/embedded-issuer.js';
import type { Config } from '../config/config.js';
import { createKafkaBrokerSide } from '../ingest/kafka-broker-side.js';
import { createStopPhases, type StopPhases } from '../process/stop-phases.js';
import type { Logger } from '../base/logger.js';
import { startService, type Service } from './service.js';
import { createRateLimitsFromConfig } from './rate-limits-from-config.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from './result-log-from-config.js';
import { createRedisConnection } from '../redis/redis-from-config.js';

/** A started service with the state it owns. */
export interface RunningService {
  readonly service: Service;
  readonly state: ConfiguredResultLog;
  /** Graceful shutdown of the service, phase by phase, its connections last. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts the configured service; `prepare` runs on the state before the service starts. */
export async function startFromConfig(config: Config, logger: Logger, prepare?: (state: ConfiguredResultLog) => Promise<void>): Promise<RunningService> {
  const stopPhases = createStopPhases({ logger });
  const state = createResultLogFromConfig(config, logger);
  // The Redis connections close after every part that uses them has stopped.
  stopPhases.register('connections', 'state connections', state);
  const limits = createRateLimitsFromConfig(config.rateLimits, config.redis, logger);
  stopPhases.register('connections', 'rate-limit connection', limits);
  try {
    await prepare?.(state);
    const service = await startService({
      config,
      logger,
      stopPhases,
      log: state.log,
      rateLimits: limits.rateLimits,
      ...(state.storedTests ? { storedTests: state.storedTests } : {}),
      createBrokerSide: (handlers) => createKafkaBrokerSide({ config: config.kafka, logger, ...handlers }),
      // A consumer-only process serves no API, so it verifies no token and runs no issuer.
      ...(config.role === 'consumer' ? {} : { auth: await createAuth(config, logger, await issuerStorage(config, logger, stopPhases)) }),
    });
    return { service, state, stop: () => service.stop() };
  } catch (error) {
    // Whatever was registered before the failure (connections at least) is released.
    await stopPhases.stop();
    throw error;
  }
}

/**
 * With `OIDC_STORE=redis` (the default with the Redis state), the embedded issuer keeps its
 * sessions, grants, codes and refresh tokens in Redis, on a connection of its own, so they survive
 * restarts and every replica honours them; otherwise oidc-provider keeps them in memory.
 */
async function issuerStorage(config: Config, logger: Logger, stopPhases: StopPhases): Promise<EmbeddedAuthOptions> {
  if (config.issuer.store !== 'redis' || config.auth.mode !== 'embedded') return {};
  // Loaded only when used, like the issuer itself (it loads oidc-provider).
  const { createRedisOidcAdapter } = await import('../auth/redis-oidc-adapter.js');
  // Like the state's connections: no offline queue and a command timeout, so a Redis that is down
  // or hangs fails token requests at once instead of piling them up.
  const redis = createRedisConnection(config.redis, logger, 'issuer');
  stopPhases.register('connections', 'issuer connection', {
    dispose: () =>
      redis.quit().then(
        () => undefined,
        () => undefined,
      ),
  });
  // A token, its grant's set and its session's index are written in one MULTI: on Redis Cluster
  // the issuer's keys share one hash tag (so one slot; they are few and small).
  const tag = config.redis.topology.mode === 'cluster' ? '{oidc}' : 'oidc';
  return { adapter: createRedisOidcAdapter({ redis, prefix: `${config.redis.keyPrefix}:${tag}:` }) };
}
