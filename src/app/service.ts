/**
 * Composition and lifecycle of one service process. The role decides which parts run: the API
 * (HTTP, WebSocket and SSE on one port, the issuer, the request publisher), the consumer in the
 * background, or both; health, readiness and metrics are always served. Every long-lived part is
 * registered in the process's lifecycle with its stop phase (see src/lifecycle/lifecycle.ts):
 * HTTP, WebSockets and event streams drain first, then the consumer commits and the producers flush, then the result
 * log and issuer let go, and the connections close last.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccessPolicy } from '../auth/access.js';
import { SCOPES } from '../auth/principal.js';
import type { Auth } from '../auth/auth.js';
import type { Config } from '../config/config.js';
import type { GraphQLDeps } from '../graphql/pipeline/context.js';
import { createApolloGraphQLServer } from '../graphql/http/apollo-server.js';
import { createGraphQLEndpoint } from '../graphql/http/graphql-endpoint.js';
import { createResponseCache } from '../graphql/pipeline/response-cache.js';
import { createOperationPipeline } from '../graphql/pipeline/operation-pipeline.js';
import type { OperationPlugin } from '../graphql/pipeline/operation-plugin.js';
import { servicePlugins } from '../graphql/pipeline/plugins/index.js';
import { createSchema } from '../graphql/schema/schema.js';
import { createGraphQLSse } from '../graphql/sse/sse-server.js';
import { createGraphQLMultipart } from '../graphql/multipart/multipart-server.js';
import { createPrincipalSlots } from '../graphql/pipeline/principal-slots.js';
import { createWriteCoalescer } from '../graphql/fanout/write-coalescer.js';
import { attachGraphQLWebSocket } from '../graphql/ws/ws-server.js';
import { createMetrics, type ClientSources } from '../telemetry/metrics.js';
import { createHttpApp, type ApiRoutes, type Readiness } from '../http/app.js';
import { principalOf } from '../http/authenticate.js';
import type { ConsumerState } from '../ingest/consumer.js';
import type { BrokerSide, BrokerHandlers } from '../ingest/broker-side.js';
import { disposeOnce } from '../lifecycle/disposable.js';
import { createEventLoopWatch } from '../lifecycle/event-loop-watch.js';
import type { Health } from '../http/app.js';
import { createLifecycle, type Lifecycle } from '../lifecycle/lifecycle.js';
import type { Logger } from '../base/logger.js';
import { createResultRecorder } from '../results/record-result.js';
import { createStartRecorder } from '../results/record-start.js';
import { createTestStarter } from '../results/test-starter.js';
import type { ResultLog } from '../log/result-log.js';
import { NO_RATE_LIMITS, type RateLimits } from '../rate-limits/rate-limits.js';

/** What the service's own pages (GraphiQL, the dashboard) ask for when a user signs in. */
const BROWSER_SCOPE = `openid profile ${SCOPES.read} ${SCOPES.write}`;

/** Everything a service process is built from; clients are injected, never created here. */
export interface ServiceOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly log: ResultLog;
  /** Builds the broker side around the handlers of what it consumes (results; start requests in the replicated mode). */
  readonly createBrokerSide: (handlers: BrokerHandlers) => BrokerSide;
  /** Token verification (and the embedded issuer, if any); required unless the role is `consumer`. */
  readonly auth?: Auth;
  /** Request budgets (see src/rate-limits/rate-limits.ts); none when absent. */
  readonly rateLimits?: RateLimits;
  /** Rules of the operation lifecycle run after the service's own (src/graphql/pipeline/plugins/index.ts), on every transport. */
  readonly plugins?: readonly OperationPlugin[];
  /** How many tests the state holds in this process, for metrics (memory modes only). */
  readonly storedTests?: () => number;
  /**
   * Where the parts this process stops are registered; the caller may have registered its own
   * (e.g. connections). A fresh one by default. `Service.stop()` stops it.
   */
  readonly lifecycle?: Lifecycle;
}

/** A running service. */
export interface Service {
  /** `http://host:port` the service listens on (the real port when configured with 0). */
  readonly url: string;
  readonly port: number;
  readonly httpServer: Server;
  readonly broker: BrokerSide;
  readiness(): Promise<Readiness>;
  /** Graceful shutdown, phase by phase; safe to call twice (the second call waits for the first). */
  stop(): Promise<void>;
}

/** The API side of a process, built around its HTTP server. */
interface ApiSide {
  readonly routes: ApiRoutes;
  readonly clients: ClientSources;
  /** Closes the WebSockets (1001), then drains in-flight HTTP requests and closes the listener. */
  stop(): Promise<void>;
}

/**
 * Starts the service. Resolves once HTTP listens; the consumer (unless the role is `api`) joins
 * its group in the background.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config, logger, log } = options;
  const lifecycle = options.lifecycle ?? createLifecycle({ logger });
  const consumes = config.role !== 'api';
  const broker = options.createBrokerSide({
    onEvents: createResultRecorder({ log }),
    onRequests: createStartRecorder({ log, maxInputBytes: config.resultLog.maxInputBytes, jsonShape: config.resultLog.jsonShape, logger }),
  });
  const httpServer = createServer();
  const api = config.role === 'consumer' ? undefined : await createApiSide(options, broker, httpServer);

  lifecycle.register('drain', 'http', { dispose: api ? () => api.stop() : () => closeHttpServer(httpServer, drainGraceMs(config)) });
  // The consumer commits what it stored as it leaves the group.
  lifecycle.register('ingest', 'broker', broker);
  lifecycle.register('state', 'result log', log);
  if (options.auth) lifecycle.register('state', 'auth', options.auth);

  let stopping = false;
  const storeCheck = () =>
    log.check().then(
      () => 'ok',
      // The cause, when the error wraps one (a ServiceError does): what an operator acts on.
      (error: unknown) => `unavailable: ${describe(error)}`,
    );
  const readiness = async (): Promise<Readiness> => {
    if (stopping) return { ready: false, checks: { service: 'shutting down' } };
    const checks: Record<string, string> = {};
    if (consumes) {
      checks.consumer = consumerCheck(broker.consumer.state());
      // Replicated mode: until it reads the requests topic, the replica knows no owner of a test started elsewhere.
      if (broker.requests) checks.requests = consumerCheck(broker.requests.state());
    }
    checks.store = await storeCheck();
    if (!api) return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
    // A process that serves the API is ready when it can answer requests: reads never touch the
    // broker, so a rebalance or a broker outage must not take it (and every other replica, at the
    // same moment) out of rotation. The consumer's state stays in the body and in the metrics,
    // for operators to alert on. The embedded issuer is built before the listener opens and keeps
    // its grants in the store checked above.
    // Replicated mode: the store is this process's memory, rebuilt by reading both topics; until
    // both consumers have joined once, it knows no test started elsewhere.
    const rebuilt = broker.requests === undefined || (broker.consumer.activity().joinedOnce && broker.requests.activity().joinedOnce);
    if (!rebuilt) checks.replay = 'waiting for both consumers to join once and rebuild the state';
    return { ready: checks.store === 'ok' && rebuilt, checks };
  };

  // Liveness: only what the process cannot recover from by itself. A broker or store outage is
  // waited out (and reported by readiness and the metrics), never a reason for a restart.
  const eventLoop = createEventLoopWatch({ maxDelayMs: config.healthMaxEventLoopDelayMs });
  lifecycle.register('connections', 'event loop watch', eventLoop);
  const health = (): Health => {
    const loop = eventLoop.check();
    const checks: Record<string, string> = { eventLoop: loop.detail };
    let healthy = loop.ok;
    if (consumes) {
      // Either consumer, the requests one of the replicated mode too: no replacement will come.
      const consumers = { consumer: broker.consumer, ...(broker.requests ? { requests: broker.requests } : {}) };
      for (const [name, consumer] of Object.entries(consumers)) {
        const gaveUp = consumer.activity().gaveUp;
        checks[name] = gaveUp === undefined ? 'ok' : `gave up: ${gaveUp}`;
        healthy &&= gaveUp === undefined;
      }
    }
    return { healthy, checks };
  };

  const metrics = createMetrics({
    ...(consumes ? { consumer: broker.consumer } : {}),
    ...(api ? { clients: api.clients } : {}),
    ...(options.storedTests ? { storedTests: options.storedTests } : {}),
    storeUp: () => storeCheck().then((check) => check === 'ok'),
    ...(log.unreadableMessages ? { unreadableMessages: () => log.unreadableMessages?.() ?? 0 } : {}),
  });
  httpServer.on('request', createHttpApp({ metrics, readiness, health, logger, trustProxy: config.trustProxy, ...(api ? { api: api.routes } : {}) }));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;

  if (api) broker.publisher.start();
  if (consumes) {
    broker.consumer.start();
    broker.requests?.start();
  }
  logger.info({ port, role: config.role, topic: config.kafka.resultsTopic, groupId: config.kafka.groupId }, 'service listening');

  const stop = disposeOnce(async () => {
    stopping = true;
    logger.info({ delayMs: config.shutdownDelayMs }, 'shutting down');
    // Readiness already answers 503. Load balancers notice on their next probe; until then they
    // still send requests here, which are served rather than refused.
    if (config.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
    await lifecycle.stop();
    logger.info('stopped');
  });

  return { url: `http://${host}:${port}`, port, httpServer, broker, readiness, stop };
}

/** An error's message, and its cause's when it wraps one (never a secret: Redis and broker errors name no credential). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause === undefined || cause === error.message ? error.message : `${error.message} (${cause})`;
}

/** GraphQL over HTTP, WebSocket and SSE (one pipeline), the REST routes and the issuer. */
async function createApiSide(options: ServiceOptions, broker: BrokerSide, httpServer: Server): Promise<ApiSide> {
  const { config, logger, log, auth } = options;
  const rateLimits = options.rateLimits ?? NO_RATE_LIMITS;
  if (auth === undefined) throw new Error(`startService: the ${config.role} role serves the API and needs auth`);
  const starter = createTestStarter({
    log,
    publisher: broker.publisher,
    logger,
    maxInputBytes: config.resultLog.maxInputBytes,
    jsonShape: config.resultLog.jsonShape,
  });
  const access = createAccessPolicy({ adminScope: config.auth.adminScope });
  const deps: GraphQLDeps = { log, starter, subscriptionQueueLimit: config.subscriptionQueueLimit, access };

  const schema = createSchema({ federation: config.graphql.federation });
  const responseCache = createResponseCache({ log, access, ...config.graphql.responseCache, ttlSeconds: config.resultLog.ttlSeconds, logger });
  // One pipeline for the three transports: Apollo Server over HTTP, graphql-ws and graphql-sse.
  const pipeline = createOperationPipeline({
    schema,
    deps,
    plugins: [
      // Refuses a manifest whose documents do not parse before anything is said about it.
      ...servicePlugins({
        schema,
        access,
        persistedOperations: config.persistedOperations,
        introspection: config.graphql.introspection,
        limits: { maxDepth: config.graphql.maxDepth, maxCost: config.graphql.maxCost },
        shapeLimits: config.graphqlShape,
        rateLimits,
        responseCache,
        debugErrors: config.browser.graphqlDebugErrors,
        logger,
      }),
      ...(options.plugins ?? []),
    ],
    debugErrors: config.browser.graphqlDebugErrors,
    documentCacheBytes: config.graphql.documentCacheMaxBytes,
    logger,
  });
  logPersistedOperations(config, logger);
  const apollo = createApolloGraphQLServer(pipeline, logger);
  await apollo.start();
  await pipeline.lifecycle.startPlugins();
  // The pushes of both streaming transports leave through one coalescer (fanout/write-coalescer.ts).
  const coalescer = createWriteCoalescer({ maxDelayMs: config.websocket.coalesceMs });
  // What a subscription asking for a delivery guarantee is told of the store behind it (docs/delivery.md).
  const kind = config.resultLog.kind;
  const delivery = {
    store: kind,
    durable: kind === 'memory' ? 'none' : kind === 'redis' && config.redis.wait.replicas > 0 ? 'failovers' : 'restarts',
  } as const;
  const ws = attachGraphQLWebSocket({
    coalescer,
    delivery,
    httpServer,
    path: '/graphql',
    pipeline,
    logger,
    verifyAccessToken: auth.verifyAccessToken,
    allowedOrigins: config.websocket.allowedOrigins,
    maxSubscriptionsPerConnection: config.websocket.maxSubscriptionsPerConnection,
    maxPayload: config.websocket.maxMessageBytes,
    maxBufferedBytes: config.websocket.maxBufferedBytes,
    drainTimeoutMs: config.websocket.drainTimeoutMs,
    maxConnectionsPerPrincipal: config.websocket.maxConnectionsPerPrincipal,
    rateLimits,
  });
  // SSE and multipart responses are both streams over HTTP: one cap per principal over the two.
  const httpStreams = {
    coalescer,
    delivery,
    pipeline,
    maxStreamsPerPrincipal: config.sse.maxStreamsPerPrincipal,
    slots: createPrincipalSlots(config.sse.maxStreamsPerPrincipal),
    maxBufferedBytes: config.websocket.maxBufferedBytes,
    drainTimeoutMs: config.websocket.drainTimeoutMs,
  };
  const sse = createGraphQLSse({ ...httpStreams, logger });
  const multipart = createGraphQLMultipart(httpStreams);
  return {
    routes: {
      log,
      starter,
      access,
      rateLimits,
      verifyAccessToken: auth.verifyAccessToken,
      ...(auth.issuer ? { issuer: auth.issuer } : {}),
      corsAllowedOrigins: config.browser.corsAllowedOrigins,
      graphiql: { enabled: config.browser.graphqlIde, signInClientId: auth.issuer ? config.browser.graphqlIdeClientId : null, signInScope: BROWSER_SCOPE },
      dashboard: { enabled: config.browser.dashboard, signInClientId: auth.issuer ? config.browser.dashboardClientId : null, signInScope: BROWSER_SCOPE },
      graphql: createGraphQLEndpoint({ http: apollo, pipeline, sse, multipart, principalOf }),
    },
    clients: {
      // The hub's: a subscriber paused while it catches up follows no test, but is still subscribed.
      subscriptions: () => pipeline.hub.followers,
      changeSubscriptions: () => log.changeSubscribers(),
      connections: () => ws.connections,
      responseCache: () => responseCache.stats(),
    },
    async stop() {
      // WebSockets first (closed with 1001) and event streams (cut: their clients reconnect with
      // Last-Event-ID elsewhere), then in-flight HTTP requests drain.
      await Promise.all([ws.dispose(), sse.dispose(), multipart.dispose()]);
      await closeHttpServer(httpServer, drainGraceMs(config));
      // Nothing is in flight any more: Apollo Server's own stop hooks run last.
      await apollo.stop();
      await pipeline.lifecycle.stopPlugins();
      coalescer.dispose();
    },
  };
}

/** A consumer's readiness check: `ok` when joined, else its state and why. */
function consumerCheck(consumer: ConsumerState): string {
  return consumer.state === 'joined' ? 'ok' : `${consumer.state}${consumer.reason ? `: ${consumer.reason}` : ''}`;
}

/** Says which operations may run; GraphiQL with trusted documents can run none of its own. */
function logPersistedOperations(config: Config, logger: Logger): void {
  const { trustedDocuments, apq } = config.persistedOperations;
  if (trustedDocuments === null) {
    logger.info({ apq: apq.mode, ...(apq.mode === 'memory' ? { maxEntries: apq.maxEntries } : {}) }, 'any operation may run (no trusted documents)');
    return;
  }
  logger.info(
    { file: trustedDocuments.file, documents: trustedDocuments.documents.size },
    'trusted documents only: operations not in the manifest are refused',
  );
  if (config.browser.graphqlIde) {
    logger.warn('GRAPHQL_IDE is on with GRAPHQL_TRUSTED_DOCUMENTS: GraphiQL sends operation text, which is refused (its schema introspection too)');
  }
}

/** How long in-flight HTTP requests may finish at shutdown: half the shutdown's time, the rest is the consumer's and the state's. */
function drainGraceMs(config: Config): number {
  return Math.floor(config.shutdownTimeoutMs / 2);
}

/** Stops listening, then lets in-flight requests finish for up to `graceMs` before their sockets are cut. */
function closeHttpServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
