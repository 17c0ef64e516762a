/**
 * The service's configuration: the one place that reads the environment. Every value is parsed and
 * validated up front, so a bad value stops startup with a message that names the variable.
 */
import { readAuth, readIssuer, type AuthConfig, type IssuerConfig } from './auth.js';
import { createReader, type Env, type Reader } from './reader.js';
import { ConfigError } from '../base/errors.js';
import { readKafka, type KafkaConfig } from './kafka.js';
import { MAX_JSON_DEPTH, type JsonShapeLimits } from '../base/json-shape.js';
import { readPersistedOperations, type PersistedOperationsConfig } from './persisted-documents.js';
import { readRedisConfig, type RedisConfig } from './redis.js';
import { readTrustProxy, type TrustProxy } from './trust-proxy.js';

export type { AuthConfig, IssuerConfig } from './auth.js';
export type { Reader } from './reader.js';
export type { KafkaConfig } from './kafka.js';
export type { KafkaSaslConfig, KafkaSslConfig } from './kafka-security.js';
export type { PersistedOperationsConfig, TrustedDocuments } from './persisted-documents.js';
export type { TrustProxy } from './trust-proxy.js';

/** Validated configuration of one service process. */
export interface Config {
  /** Which parts this process runs (see {@link ServiceRole}). */
  readonly role: ServiceRole;
  readonly port: number;
  readonly host: string;
  /** Which peers' `X-Forwarded-*` headers are believed (`TRUST_PROXY`): the client IP and the issuer's public scheme and host. */
  readonly trustProxy: TrustProxy;
  /** `production` turns GraphiQL, the dashboard, field suggestions and APQ off by default (GRAPHQL_IDE, DASHBOARD, GRAPHQL_FIELD_SUGGESTIONS, GRAPHQL_APQ). */
  readonly production: boolean;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly kafka: KafkaConfig;
  readonly resultLog: ResultLogConfig;
  /** How to reach Redis, for the parts whose store is Redis (the result log, the rate limits, the issuer). */
  readonly redis: RedisConfig;
  readonly graphql: GraphQLConfig;
  readonly graphqlShape: GraphQLShapeConfig;
  /** Trusted documents (the only operations that run) and automatic persisted queries. */
  readonly persistedOperations: PersistedOperationsConfig;
  readonly auth: AuthConfig;
  /** The embedded authorization server (used when `auth.mode` is `embedded`). */
  readonly issuer: IssuerConfig;
  readonly websocket: WebSocketConfig;
  readonly sse: SseConfig;
  readonly browser: BrowserConfig;
  readonly rateLimits: RateLimitConfig;
  readonly telemetry: TelemetryConfig;
  /** Live messages buffered per subscriber before it is closed as too slow. */
  readonly subscriptionQueueLimit: number;
  /** How long a graceful shutdown may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** After a stop signal, how long the service keeps serving while `/readyz` answers 503. */
  readonly shutdownDelayMs: number;
  /** `/healthz` fails while the event loop was blocked longer than this within the last 10 s. */
  readonly healthMaxEventLoopDelayMs: number;
}

/**
 * `all`: the API and the consumer in one process. `api`: HTTP, WebSocket and the issuer, producing
 * start requests but consuming nothing. `consumer`: consumes into the shared state and serves only
 * health, readiness and metrics. `api` and `consumer` share their state through Redis.
 */
export type ServiceRole = 'all' | 'api' | 'consumer';

/** Where the state lives, and its bounds. */
export interface ResultLogConfig {
  /**
   * `memory`: this process only. `redis`: shared by every replica. `replicated`: in memory, but
   * every replica consumes every partition (a consumer group of its own) and rebuilds its state
   * from the earliest retained record at startup.
   */
  readonly kind: 'memory' | 'redis' | 'replicated';
  /** A test with no new result for this long is dropped. */
  readonly ttlSeconds: number;
  /** Past this many tests the least recently updated ones are evicted (memory only). */
  readonly maxTests: number;
  /** Messages kept per test; later ones are refused, logged and counted. */
  readonly maxMessagesPerTest: number;
  /** Largest input of a test (its JSON, in bytes), on every way of starting one (`TEST_INPUT_MAX_BYTES`). */
  readonly maxInputBytes: number;
  /** Bytes the tests held in this process may hold (memory and replicated state), `STORE_MAX_BYTES`. */
  readonly maxBytes: number;
  /** The shape limits of every stored JSON value, inputs and payloads (`JSON_MAX_*`); the same as `kafka.jsonShape`. */
  readonly jsonShape: JsonShapeLimits;
}

/** Limits of GraphQL operations. */
export interface GraphQLConfig {
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly introspection: boolean;
  /** Serve the schema as an Apollo Federation 2 subgraph (`FEDERATION`). */
  readonly federation: boolean;
  /** The HTTP response cache of test reads; off when either bound is 0. */
  readonly responseCache: { readonly maxEntries: number; readonly maxBytes: number };
  /** Bytes of parsed documents kept for reuse, by HTTP and by the streaming transports each. */
  readonly documentCacheMaxBytes: number;
}

/** Limits of an operation's shape (graphql-armor's rules, graphql-js's token and suggestion options), on HTTP, WebSocket and SSE alike. */
export interface GraphQLShapeConfig {
  readonly maxAliases: number;
  readonly maxDirectives: number;
  /** Parser tokens per document. */
  readonly maxTokens: number;
  /** Whether validation errors suggest similar field names ("Did you mean …?"). */
  readonly fieldSuggestions: boolean;
}

/** What browsers and people exploring the API get: CORS, the GraphQL IDE, error details. */
export interface BrowserConfig {
  /** Exact origins (`https://host[:port]`) whose pages may call the API (CORS); none by default. */
  readonly corsAllowedOrigins: readonly string[];
  /** Serve GraphiQL at `GET /graphql` for `Accept: text/html` (default: on, except in production or with trusted documents). */
  readonly graphqlIde: boolean;
  /** Public client (of the embedded issuer) GraphiQL signs in with; null: no sign-in button. */
  readonly graphqlIdeClientId: string | null;
  /** Serve the live dashboard at `/dashboard/` (default: on, except in production). */
  readonly dashboard: boolean;
  /** Public client (of the embedded issuer) the dashboard signs in with; null: the dashboard cannot sign in. */
  readonly dashboardClientId: string | null;
  /** GraphQL errors carry stack traces and unexpected errors' own messages; off by default, in every environment. */
  readonly graphqlDebugErrors: boolean;
}

/** GraphQL over SSE (its buffer limit is the WebSocket's `maxBufferedBytes`). */
export interface SseConfig {
  /** Event streams one principal may hold open at once in one process. */
  readonly maxStreamsPerPrincipal: number;
}

/** Limits of GraphQL over WebSocket. */
export interface WebSocketConfig {
  /** Origins a browser may open a WebSocket from, besides the service's own; `*` allows all. */
  readonly allowedOrigins: readonly string[];
  readonly maxSubscriptionsPerConnection: number;
  readonly maxMessageBytes: number;
  /** Outgoing bytes buffered for one client (a socket or an SSE response) past which its operations wait for it. */
  readonly maxBufferedBytes: number;
  /** How long a client may stay over `maxBufferedBytes` before its socket or stream is cut. */
  readonly drainTimeoutMs: number;
  /** WebSockets one principal may hold open at once in one process. */
  readonly maxConnectionsPerPrincipal: number;
  /** How long pushes to one connection may wait to leave together while the process is busy (0: never). */
  readonly coalesceMs: number;
}

/**
 * Rate limits (`RATE_LIMITS`, on by default): budgets per minute, per principal for the API, for
 * WebSocket operations and for new WebSocket connections, per client IP for the token endpoint and
 * the login form. Counted where `RATE_LIMITS_STORE` says: in Redis, replicas share each budget.
 */
export interface RateLimitConfig {
  readonly enabled: boolean;
  /** Where the budgets are counted (`RATE_LIMITS_STORE`). */
  readonly store: 'memory' | 'redis';
  readonly perMinute: Readonly<Record<'api' | 'subscribe' | 'wsConnect' | 'auth', number>>;
}

/** Tracing with OpenTelemetry: on when an OTLP endpoint is set, and then nothing of it is loaded otherwise. */
export interface TelemetryConfig {
  /** OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); null: tracing off. */
  readonly otlpEndpoint: URL | null;
  readonly serviceName: string;
  /** Which traces are sampled (`OTEL_TRACES_SAMPLER`, the standard names). */
  readonly sampler: TraceSamplerName;
  /** Share of traces started here that are sampled (`OTEL_TRACES_SAMPLER_ARG`). */
  readonly sampleRatio: number;
}

/** The samplers of `OTEL_TRACES_SAMPLER` the service takes. */
export const TRACE_SAMPLERS = [
  'parentbased_traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'traceidratio',
  'always_on',
  'always_off',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

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
