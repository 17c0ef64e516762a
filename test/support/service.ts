/**
 * Starts a real service in-process on port 0 against a real broker, with topics and a consumer
 * group of its own so tests never see each other's records; or, for the operation pipeline's
 * tests, against no broker at all (`startPipelineService`: the memory broker side).
 */
import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config/config.js';
import { freePort } from '../../tools/kafka/kafka-process.js';
import { createAuth } from '../../src/auth/create-auth.js';
import type { Auth } from '../../src/auth/auth.js';
import { createExternalAuth } from '../../src/auth/external-auth.js';
import { createKafkaBrokerSide } from '../../src/ingest/kafka-broker-side.js';
import type { OperationPlugin } from '../../src/graphql/pipeline/operation-plugin.js';
import { createMemoryBrokerSide, type MemoryBrokerSide } from './memory-broker-side.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createLogger, type Logger } from '../../src/base/logger.js';
import { startService, type Service } from '../../src/app/service.js';
import { createRateLimitsFromConfig } from '../../src/app/rate-limits-from-config.js';
import { eventually } from './graphql.js';
import { HS256_ENV } from './tokens.js';

/** A service under test. */
export interface TestService {
  readonly service: Service;
  readonly url: string;
  readonly config: Config;
  readonly log: ResultLog;
  /** The broker side when the service runs without a broker (`startPipelineService`). */
  readonly memoryBroker?: MemoryBrokerSide;
  /** Resolves once readiness is 200 and the consumers have joined their groups. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/** Options: the brokers, and environment overrides as docs/configuration.md documents them. */
export interface TestServiceOptions {
  /** None: the memory broker side (`startPipelineService`). */
  readonly brokers?: readonly string[];
  readonly env?: Record<string, string>;
  /** Wrap the result log, e.g. to count calls. */
  readonly wrapLog?: (log: ResultLog) => ResultLog;
  /** Share state with another instance (the default is a fresh memory log). */
  readonly log?: ResultLog;
  readonly logger?: Logger;
  /** Authentication; by default HS256 tokens of the test issuer (see tokens.ts). */
  readonly auth?: Auth;
  /**
   * Run the embedded issuer instead (env should name OIDC_CLIENTS_FILE / OIDC_USERS_FILE). The
   * issuer URL must be known before listening, so a free port is picked first.
   */
  readonly embeddedIssuer?: boolean;
  /** Operation lifecycle plugins run after the service's own. */
  readonly plugins?: readonly OperationPlugin[];
}

/** A TCP port that was free a moment ago (for servers whose URL must be known before they listen). */
export { freePort };

/** Unique topic names for one test file. */
export function uniqueTopics(label: string) {
  const suffix = randomUUID().slice(0, 8);
  return { results: `${label}-results-${suffix}`, requests: `${label}-requests-${suffix}`, group: `${label}-group-${suffix}` };
}

/** Starts the service; the caller creates the topics first. */
export async function startTestService(options: TestServiceOptions): Promise<TestService> {
  const port = options.embeddedIssuer ? await freePort() : 0;
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Never dialled without brokers: the memory broker side stands in.
    KAFKA_BROKERS: (options.brokers ?? ['127.0.0.1:9']).join(','),
    SHUTDOWN_TIMEOUT_MS: '5000',
    // Off unless a test turns them on: most tests send more than a budget allows.
    RATE_LIMITS: 'off',
    ...(options.embeddedIssuer ? { PUBLIC_URL: `http://127.0.0.1:${port}` } : HS256_ENV),
    ...options.env,
  });
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  // Shared state belongs to whoever passed it in: this instance's stop() must not dispose it.
  const own = options.log ? undefined : createMemoryResultLog(config.resultLog);
  const shared = own ?? { ...(options.log as ResultLog), dispose: async () => {} };
  const log = options.wrapLog ? options.wrapLog(shared) : shared;
  // In Redis with STATE_STORE=redis, so two instances with one REDIS_KEY_PREFIX share the budgets.
  const limits = createRateLimitsFromConfig(config.rateLimits, config.redis, logger);
  let memoryBroker: MemoryBrokerSide | undefined;
  const service = await startService({
    config,
    logger,
    log,
    rateLimits: limits.rateLimits,
    ...(own ? { storedTests: () => own.size } : {}),
    createBrokerSide: (handlers) => {
      if (options.brokers !== undefined) return createKafkaBrokerSide({ config: config.kafka, logger, ...handlers });
      memoryBroker = createMemoryBrokerSide(handlers);
      return memoryBroker;
    },
    ...(options.plugins ? { plugins: options.plugins } : {}),
    auth: options.auth ?? (options.embeddedIssuer ? await createAuth(config, logger) : createExternalAuth(config.auth)),
  });
  return {
    service,
    url: service.url,
    config,
    log,
    ...(memoryBroker ? { memoryBroker } : {}),
    ready: async () => {
      // Readiness of an API-serving process no longer waits for the consumer: the tests that need
      // it in its group (most of them) wait for its check too.
      const joined = (check: string | undefined) => check === undefined || check === 'ok';
      await eventually(
        async () => {
          const { ready, checks } = await service.readiness();
          if (ready && joined(checks.consumer) && joined(checks.requests)) return true;
          // Said by the timeout, so that a run that fails here tells which check held it.
          throw new Error(`readiness ${ready ? 'ok' : 'not ready'}: ${JSON.stringify(checks)}`);
        },
        30_000,
        'consumer to join its group',
      );
    },
    stop: async () => {
      await service.stop();
      await limits.dispose();
    },
  };
}

/**
 * The pipeline's harness: a real service (HTTP, graphql-ws and graphql-sse on one port, a memory
 * log) with no broker behind it. Start requests land in `memoryBroker.published`; results reach
 * the log through `memoryBroker.deliver`, the handler a consumer would call.
 */
export function startPipelineService(options: Omit<TestServiceOptions, 'brokers'> = {}): Promise<TestService & { readonly memoryBroker: MemoryBrokerSide }> {
  return startTestService(options) as Promise<TestService & { readonly memoryBroker: MemoryBrokerSide }>;
}

/** How many tests a service created, counted through its `wrapLog`. */
export interface CreateCounter {
  /** Pass as `wrapLog`. */
  readonly wrapLog: (log: ResultLog) => ResultLog;
  count(): number;
}

/** Counts the log's `create` calls: a refused operation must never reach the resolvers. */
export function countCreates(): CreateCounter {
  let created = 0;
  return {
    wrapLog: (log) => ({
      ...log,
      create: (test) => {
        created += 1;
        return log.create(test);
      },
    }),
    count: () => created,
  };
}
