/**
 * The service's configuration: the one place that reads the environment. Every value is parsed and
 * validated up front, so a bad value stops startup with a message that names the variable.
 */
import { readAuth, readIssuer } from './auth.js';
import { createReader, type Env, type Reader } from './reader.js';
import { ConfigError } from '../base/errors.js';
import { readKafka } from './kafka.js';
import { MAX_JSON_DEPTH, type JsonShapeLimits } from '../base/json-shape.js';
import { readPersistedOperations } from './persisted-documents.js';
import { readRedisConfig } from './redis.js';
import { readTrustProxy } from './trust-proxy.js';
import { TRACE_SAMPLERS, type BrowserConfig, type Config, type ResultLogConfig, type ServiceRole, type TraceSamplerName } from './config-types.js';

export type { AuthConfig, IssuerConfig } from './auth.js';
export type { Reader } from './reader.js';
export type { KafkaConfig } from './kafka.js';
export type { KafkaSaslConfig, KafkaSslConfig } from './kafka-security.js';
export type { PersistedOperationsConfig, TrustedDocuments } from './persisted-documents.js';
export type { TrustProxy } from './trust-proxy.js';
export type * from './config-types.js';
export { TRACE_SAMPLERS } from './config-types.js';

/** Reads and validates the configuration from `env` (the process environment by default). */
export function loadConfig(env: Env = process.env): Config {
  const read = createReader(env);
  const stateKind = read.oneOf('STATE_STORE', 'memory', ['memory', 'redis', 'replicated']);
  const role = readRole(read, stateKind);
  const production = read.string('NODE_ENV', 'development') === 'production';
  const port = read.int('PORT', 4000, { min: 0, max: 65535 });
  const auth = readAuth(read, port);
  // Each part that keeps state chooses its store; by default the rate limits and the issuer keep
  // theirs where the results are shared (Redis), so replicas agree on budgets and sign-ins.
  const sharedStore = stateKind === 'redis' ? 'redis' : 'memory';
  const rateLimitsStore = read.oneOf('RATE_LIMITS_STORE', sharedStore, ['memory', 'redis']);
  const issuer = readIssuer(read, { production, runsIssuer: auth.mode === 'embedded' && role !== 'consumer', defaultStore: sharedStore });
  const rateLimitsEnabled = read.bool('RATE_LIMITS', true);
  const usesRedis = stateKind === 'redis' || (rateLimitsEnabled && rateLimitsStore === 'redis') || (auth.mode === 'embedded' && issuer.store === 'redis');
  const persistedOperations = readPersistedOperations(read, production);
  // With trusted documents the IDE could run nothing (its own introspection query included).
  const browser = readBrowser(read, production || persistedOperations.trustedDocuments !== null);
  // One set of shape limits for both doors: what a start accepts and what ingest stores.
  const jsonShape: JsonShapeLimits = {
    maxDepth: read.int('JSON_MAX_DEPTH', 64, { min: 1, max: MAX_JSON_DEPTH }),
    maxKeys: read.int('JSON_MAX_KEYS', 10_000, { min: 1 }),
    maxArrayLength: read.int('JSON_MAX_ARRAY_LENGTH', 100_000, { min: 1 }),
    maxStringLength: read.int('JSON_MAX_STRING_LENGTH', 1_048_576, { min: 1 }),
  };
  return {
    role,
    port,
    host: read.string('HOST', '0.0.0.0'),
    trustProxy: readTrustProxy(read),
    production,
    logLevel: read.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    kafka: { ...readKafka(read, stateKind), jsonShape },
    resultLog: {
      kind: stateKind,
      ttlSeconds: read.int('STORE_TTL_SECONDS', 86_400, { min: 1 }),
      maxTests: read.int('STORE_MAX_TESTS', 10_000, { min: 1 }),
      maxMessagesPerTest: read.int('STORE_MAX_MESSAGES_PER_TEST', 10_000, { min: 1 }),
      maxInputBytes: read.int('TEST_INPUT_MAX_BYTES', 64 * 1024, { min: 16, max: 1024 * 1024 }),
      maxBytes: read.int('STORE_MAX_BYTES', 512 * 1024 * 1024, { min: 1024 * 1024 }),
      jsonShape,
    },
    // Checked only where it is used: a process that keeps nothing in Redis never connects to it.
    redis: readRedisConfig(read, usesRedis),
    graphql: {
      maxDepth: read.int('GRAPHQL_MAX_DEPTH', 10, { min: 1, max: 100 }),
      maxCost: read.int('GRAPHQL_MAX_COST', 10_000, { min: 1 }),
      introspection: read.bool('GRAPHQL_INTROSPECTION', true),
      federation: read.bool('FEDERATION', false),
      responseCache: {
        maxEntries: read.int('GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES', 10_000, { min: 0 }),
        maxBytes: read.int('GRAPHQL_RESPONSE_CACHE_MAX_BYTES', 64 * 1024 * 1024, { min: 0 }),
      },
      documentCacheMaxBytes: read.int('GRAPHQL_DOCUMENT_CACHE_MAX_BYTES', 16 * 1024 * 1024, { min: 0 }),
    },
    graphqlShape: {
      maxAliases: read.int('GRAPHQL_MAX_ALIASES', 15, { min: 0, max: 1000 }),
      maxDirectives: read.int('GRAPHQL_MAX_DIRECTIVES', 50, { min: 0, max: 1000 }),
      maxTokens: read.int('GRAPHQL_MAX_TOKENS', 1000, { min: 100, max: 100_000 }),
      fieldSuggestions: read.bool('GRAPHQL_FIELD_SUGGESTIONS', !production),
    },
    persistedOperations,
    auth,
    issuer,
    websocket: {
      // The CORS list governs WebSockets too, unless WS_ALLOWED_ORIGINS sets them apart.
      allowedOrigins: read.list('WS_ALLOWED_ORIGINS', browser.corsAllowedOrigins, /^(\*|https?:\/\/[^\s/,]+)$/, 'origin (https://host[:port] or *)'),
      maxSubscriptionsPerConnection: read.int('WS_MAX_SUBSCRIPTIONS', 20, { min: 1, max: 10_000 }),
      maxMessageBytes: read.int('WS_MAX_MESSAGE_BYTES', 64 * 1024, { min: 1024, max: 16 * 1024 * 1024 }),
      maxBufferedBytes: read.int('WS_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, { min: 64 * 1024 }),
      drainTimeoutMs: read.int('WS_DRAIN_TIMEOUT_MS', 30_000, { min: 100 }),
      maxConnectionsPerPrincipal: read.int('WS_MAX_CONNECTIONS', 20, { min: 1, max: 10_000 }),
      coalesceMs: read.int('WS_COALESCE_MS', 10, { min: 0, max: 1000 }),
    },
    sse: {
      maxStreamsPerPrincipal: read.int('SSE_MAX_STREAMS', 20, { min: 1, max: 10_000 }),
    },
    browser,
    rateLimits: {
      enabled: rateLimitsEnabled,
      store: rateLimitsStore,
      perMinute: {
        api: read.int('RATE_LIMIT_API_PER_MINUTE', 600, { min: 1 }),
        subscribe: read.int('RATE_LIMIT_SUBSCRIBES_PER_MINUTE', 120, { min: 1 }),
        wsConnect: read.int('RATE_LIMIT_WS_CONNECTIONS_PER_MINUTE', 30, { min: 1 }),
        auth: read.int('RATE_LIMIT_AUTH_PER_MINUTE', 20, { min: 1 }),
      },
    },
    telemetry: {
      otlpEndpoint: read.url('OTEL_EXPORTER_OTLP_ENDPOINT'),
      serviceName: read.string('OTEL_SERVICE_NAME', 'result-collection-service'),
      sampler: read.oneOf<TraceSamplerName>('OTEL_TRACES_SAMPLER', 'parentbased_traceidratio', TRACE_SAMPLERS),
      sampleRatio: read.ratio('OTEL_TRACES_SAMPLER_ARG', 1),
    },
    subscriptionQueueLimit: read.int('SUBSCRIPTION_QUEUE_LIMIT', 1000, { min: 1 }),
    shutdownTimeoutMs: read.int('SHUTDOWN_TIMEOUT_MS', 10_000, { min: 100 }),
    shutdownDelayMs: read.int('SHUTDOWN_DELAY_MS', 0, { min: 0, max: 300_000 }),
    healthMaxEventLoopDelayMs: read.int('HEALTH_MAX_EVENT_LOOP_DELAY_MS', 5000, { min: 100 }),
  };
}

/**
 * `pagesOffByDefault`: production, or trusted documents (GraphiQL and the dashboard send operation
 * text, which a manifest refuses).
 */
function readBrowser(read: Reader, pagesOffByDefault: boolean): BrowserConfig {
  const origins = read.list('CORS_ALLOWED_ORIGINS', [], /^https?:\/\/[^\s/,]+$/, 'origin (https://host[:port])');
  for (const origin of origins) {
    // Browsers send the serialized origin (lower case, no default port, no path): only that form ever matches.
    const serialized = URL.canParse(origin) ? new URL(origin).origin : 'null';
    if (serialized !== origin)
      throw new ConfigError(
        'CORS_ALLOWED_ORIGINS',
        `"${origin}" is not an exact origin (scheme://host[:port])${serialized === 'null' ? '' : `; write it as ${serialized}`}`,
      );
  }
  return {
    corsAllowedOrigins: origins,
    graphqlIde: read.bool('GRAPHQL_IDE', !pagesOffByDefault),
    graphqlIdeClientId: read.string('GRAPHQL_IDE_CLIENT_ID', '') || null,
    dashboard: read.bool('DASHBOARD', !pagesOffByDefault),
    dashboardClientId: read.string('DASHBOARD_CLIENT_ID', '') || null,
    graphqlDebugErrors: read.bool('GRAPHQL_DEBUG_ERRORS', false),
  };
}

/** A split role needs state that outlives the process and is seen by the others: Redis. */
function readRole(read: Reader, stateKind: ResultLogConfig['kind']): ServiceRole {
  const role = read.oneOf<ServiceRole>('SERVICE_ROLE', 'all', ['all', 'api', 'consumer']);
  if (role !== 'all' && stateKind !== 'redis') {
    throw new ConfigError(
      'SERVICE_ROLE',
      `${role} needs STATE_STORE=redis, got STATE_STORE=${stateKind}: api and consumer processes share their state through Redis (use SERVICE_ROLE=all with the ${stateKind} state)`,
    );
  }
  return role;
}
