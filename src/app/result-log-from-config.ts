/**
 * Builds the result log of a process from its configuration, in memory or in Redis, with the
 * Redis connections it needs (owned and closed here, opened by redis-from-config.ts).
 */
import type { Config } from '../config/config.js';
import type { Disposable } from '../process/disposable.js';
import { disposeOnce } from '../process/disposable.js';
import type { Logger } from '../base/logger.js';
import { createMemoryResultLog } from '../log/memory-result-log.js';
import { createRedisResultLog } from '../log/redis-result-log.js';
import { createRedisConnection } from '../redis/redis-from-config.js';
import type { ResultLog } from '../log/result-log.js';

/** The result log of one process. */
export interface ConfiguredResultLog extends Disposable {
  readonly log: ResultLog;
  /** Tests held in this process, when the state is held here (memory modes). */
  readonly storedTests?: () => number;
  /** Closes the log, then its connections (after the service has stopped using them). Safe to call twice. */
  dispose(): Promise<void>;
}

/** Creates the configured result log. Redis connections are opened in the background. */
export function createResultLogFromConfig({ resultLog: config, redis: redisConfig }: Pick<Config, 'resultLog' | 'redis'>, logger: Logger): ConfiguredResultLog {
  if (config.kind === 'memory' || config.kind === 'replicated') {
    const log = createMemoryResultLog(config);
    return { log, storedTests: () => log.size, dispose: () => log.dispose() };
  }
  const commands = createRedisConnection(redisConfig, logger, 'commands');
  // ioredis re-subscribes its channels by itself after a reconnect; the log re-reads what it missed.
  const subscriber = createRedisConnection(redisConfig, logger, 'subscriber', { subscriber: true });
  const { wait } = redisConfig;
  // Writes that wait for replicas go on a connection of their own: a WAIT blocks its connection,
  // and reads, tails and readiness must not wait behind it.
  const writer = wait.replicas > 0 ? createRedisConnection(redisConfig, logger, 'writes') : undefined;
  const log = createRedisResultLog({
    redis: commands,
    ...(writer === undefined ? {} : { writer }),
    subscriber,
    ttlSeconds: config.ttlSeconds,
    maxMessagesPerTest: config.maxMessagesPerTest,
    prefix: redisConfig.keyPrefix,
    waitReplicas: wait.replicas,
    waitTimeoutMs: wait.timeoutMs,
    logger,
  });
  return {
    log,
    dispose: disposeOnce(async () => {
      await log.dispose();
      await Promise.allSettled([commands.quit(), subscriber.quit(), ...(writer === undefined ? [] : [writer.quit()])]);
    }),
  };
}
