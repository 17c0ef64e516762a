/**
 * The API side of a process: the schema and the operation pipeline, Apollo Server for HTTP, the
 * WebSocket, SSE and multipart transports on the process's HTTP server, the routes that publish
 * starts, and how they stop (WebSockets and streams first, then in-flight HTTP requests).
 */
import type { Server } from 'node:http';
import { createAccessPolicy } from '../auth/access.js';
import { SCOPES } from '../auth/principal.js';
import type { Config } from '../config/config.js';
import type { GraphQLDeps } from '../graphql/pipeline/context.js';
import { createApolloGraphQLServer } from '../graphql/http/apollo-server.js';
import { createGraphQLEndpoint } from '../graphql/http/graphql-endpoint.js';
import { createResponseCache } from '../graphql/pipeline/response-cache.js';
import { createOperationPipeline } from '../graphql/pipeline/operation-pipeline.js';
import { servicePlugins } from '../graphql/pipeline/plugins/index.js';
import { createSchema } from '../graphql/schema/schema.js';
import { createGraphQLSse } from '../graphql/sse/sse-server.js';
import { createGraphQLMultipart } from '../graphql/multipart/multipart-server.js';
import { createPrincipalSlots } from '../graphql/pipeline/principal-slots.js';
import { createWriteCoalescer } from '../graphql/fanout/write-coalescer.js';
import { attachGraphQLWebSocket } from '../graphql/ws/ws-server.js';
import type { ClientSources } from '../telemetry/metrics.js';
import type { ApiRoutes } from '../http/app.js';
import { principalOf } from '../http/authenticate.js';
import type { BrokerSide } from '../ingest/broker-side.js';
import type { Logger } from '../base/logger.js';
import { createTestStarter } from '../results/test-starter.js';
import { NO_RATE_LIMITS } from '../rate-limits/rate-limits.js';
import type { ServiceOptions } from './service-options.js';
import { closeHttpServer, drainGraceMs } from './http-close.js';

/** What the service's own pages (GraphiQL, the dashboard) ask for when a user signs in. */
const BROWSER_SCOPE = `openid profile ${SCOPES.read} ${SCOPES.write}`;

/** The API side of a process, built around its HTTP server. */
export interface ApiSide {
  readonly routes: ApiRoutes;
  readonly clients: ClientSources;
  /** Closes the WebSockets (1001), then drains in-flight HTTP requests and closes the listener. */
  stop(): Promise<void>;
}

/** Builds the API side of a process around `httpServer`. */
export async function createApiSide(options: ServiceOptions, broker: BrokerSide, httpServer: Server): Promise<ApiSide> {
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
  // One pipeline for the four transports: Apollo Server over HTTP, graphql-ws, graphql-sse and multipart.
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
        documentCacheBytes: config.graphql.documentCacheMaxBytes,
        debugErrors: config.browser.graphqlDebugErrors,
        logger,
      }),
      ...(options.plugins ?? []),
    ],
    debugErrors: config.browser.graphqlDebugErrors,
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
