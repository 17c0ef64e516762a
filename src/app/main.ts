/**
 * Process entry point: reads the configuration, builds the clients, starts the service and stops
 * it gracefully on SIGTERM or SIGINT.
 *
 * The service itself is imported only after tracing has started (when it is configured): the
 * instrumentations' loader hooks see only modules loaded after them.
 */
import { loadConfig } from '../config/config.js';
import { ConfigError } from '../base/errors.js';
import { createLogger } from '../base/logger.js';

async function main(): Promise<void> {
  // A ConfigError thrown here or while the service is built ends the process below, with exit 78.
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const { otlpEndpoint, serviceName, sampler, sampleRatio } = config.telemetry;
  const telemetry =
    otlpEndpoint === null
      ? undefined
      : await (await import('../telemetry/start-telemetry.js')).startTelemetry({ otlpEndpoint, serviceName, sampler, sampleRatio });
  if (telemetry !== undefined) logger.info({ otlpEndpoint: otlpEndpoint?.origin, serviceName, sampler, sampleRatio }, 'tracing on');
  const { startFromConfig } = await import('./start-from-config.js');
  const running = await startFromConfig(config, logger);

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'signal received');
    const deadline = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownDelayMs + config.shutdownTimeoutMs);
    deadline.unref();
    running
      .stop()
      // Spans of the shutdown itself included.
      .then(() => telemetry?.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: `invalid configuration: ${error.message}`, variable: error.variable })}\n`);
    process.exit(78); // EX_CONFIG
  }
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'startup failed', err: String((error as Error)?.stack ?? error) })}\n`);
  process.exit(1);
});
