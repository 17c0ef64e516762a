/**
 * The shape of the service's configuration (config.ts reads and validates it): a seam file, so that
 * a part can name the settings it takes without the reading code.
 */
import type { AuthConfig, IssuerConfig } from './auth.js';
import type { KafkaConfig } from './kafka.js';
import type { JsonShapeLimits } from '../base/json-shape.js';
import type { PersistedOperationsConfig } from './persisted-documents.js';
import type { RedisConfig } from './redis.js';
import type { TrustProxy } from './trust-proxy.js';

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
  /** Bytes of parsed documents kept for reuse, by every transport together. */
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
