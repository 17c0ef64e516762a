/**
 * Builds and starts a whole service process from its configuration: state, broker side, auth (for
 * the roles that serve the API).
 * The process entry point and the benchmarks start the service the same way through this.
 */
import { createAuth } from './auth/auth-from-config.js';
import type { Config } from './config.js';
import { createKafkaIngest } from './ingest/kafka-ingest.js';
import type { Logger } from './logger.js';
import { startService, type Service } from './service.js';
import { createState, type State } from './state.js';

/** A started service with the state it owns. */
export interface RunningService {
  readonly service: Service;
  readonly state: State;
  /** Graceful shutdown of the service, then its connections. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts the configured service; `prepare` runs on the state before the service starts. */
export async function startFromConfig(config: Config, logger: Logger, prepare?: (state: State) => Promise<void>): Promise<RunningService> {
  const state = createState(config.store, logger);
  await prepare?.(state);
  const service = await startService({
    config,
    logger,
    log: state.log,
    ...(state.storedTests ? { storedTests: state.storedTests } : {}),
    createIngest: (onEvents) => createKafkaIngest({ config: config.kafka, logger, onEvents }),
    // A consumer-only process serves no API, so it verifies no token and runs no issuer.
    ...(config.role === 'consumer' ? {} : { auth: await createAuth(config, logger) }),
  });
  let stopping: Promise<void> | undefined;
  return {
    service,
    state,
    stop() {
      stopping ??= service.stop().then(() => state.dispose());
      return stopping;
    },
  };
}
