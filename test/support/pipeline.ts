/**
 * The operation pipeline alone, composed as the service composes it (the service's plugins, the
 * default configuration) over a memory log, for unit tests of a transport or a plugin that need
 * no HTTP server of the service's own. Nothing here starts a test: a start request reaching the
 * publisher fails the operation.
 */
import { createAccessPolicy, type AccessPolicy } from '../../src/auth/access.js';
import { createSilentLogger, type Logger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/config/config.js';
import { createOperationPipeline, type OperationPipeline } from '../../src/graphql/pipeline/operation-pipeline.js';
import { servicePlugins } from '../../src/graphql/pipeline/plugins/index.js';
import { createSchema } from '../../src/graphql/schema/schema.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { NO_RATE_LIMITS } from '../../src/rate-limits/rate-limits.js';
import { createTestStarter } from '../../src/results/test-starter.js';
import { HS256_ENV } from './tokens.js';

/** A pipeline and what it reads. */
export interface TestPipeline {
  readonly pipeline: OperationPipeline;
  readonly log: ResultLog;
  readonly logger: Logger;
}

/** Composes the pipeline; `access` replaces the default policy (to count its checks, say). */
export function createTestPipeline(options: { readonly access?: AccessPolicy } = {}): TestPipeline {
  const config = loadConfig({ ...HS256_ENV, KAFKA_BROKERS: '127.0.0.1:9' });
  const logger = createSilentLogger();
  const log = createMemoryResultLog(config.resultLog);
  const publisher = { start() {}, publish: () => Promise.reject(new Error('no start requests in this test')), dispose: async () => {} };
  const access = options.access ?? createAccessPolicy({ adminScope: config.auth.adminScope });
  const schema = createSchema();
  const starter = createTestStarter({ log, publisher, logger, maxInputBytes: config.resultLog.maxInputBytes });
  const plugins = servicePlugins({
    schema,
    access,
    persistedOperations: config.persistedOperations,
    introspection: true,
    limits: config.graphql,
    shapeLimits: config.graphqlShape,
    rateLimits: NO_RATE_LIMITS,
    debugErrors: false,
    logger,
  });
  const pipeline = createOperationPipeline({ schema, deps: { log, starter, subscriptionQueueLimit: 100, access }, plugins, debugErrors: false, logger });
  return { pipeline, log, logger };
}
