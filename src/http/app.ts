/**
 * The HTTP routes: REST twins of the GraphQL operations, health and readiness, and the GraphQL
 * endpoint itself (mounted from outside). A consumer-only process serves health, readiness and
 * metrics alone. Errors leave as RFC 9457 problem details.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AccessPolicy } from '../auth/access.js';
import type { TrustProxy } from '../config/config.js';
import { SCOPES, type VerifyAccessToken } from '../auth/principal.js';
import { ServiceError, isServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { TestStarter } from '../results/test-starter.js';
import type { ResultStore } from '../log/result-log.js';
import type { RateLimits } from '../rate-limits/rate-limits.js';
import { authenticate, principalOf, sendAuthError } from './authenticate.js';
import { createCors } from './cors.js';
import { createDashboardRoutes, type DashboardOptions } from './dashboard.js';
import { createGraphiqlPage, createGraphiqlRoutes, wantsGraphiqlPage, type GraphiqlOptions } from './graphiql.js';
import { sendProblem } from './problem.js';
import { sendRefusal } from './send-refusal.js';
import { byClientIp, byPrincipal, rateLimit } from './rate-limit.js';
import { assignRequestId, requestIdOf } from './request-id-header.js';
import { securityHeaders } from './security-headers.js';
import { stringifyWithText } from '../domain/json-text.js';
import { messageQuery, testToJson } from './test-json.js';
import { canonicalCorrelationId } from '../domain/correlation-id.js';

/** The answer of the readiness probe. */
export interface Readiness {
  readonly ready: boolean;
  /** One entry per dependency: `ok`, or why not. */
  readonly checks: Readonly<Record<string, string>>;
}

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  readonly readiness: () => Promise<Readiness>;
  /** Liveness; without it `/healthz` answers 200 whenever it answers at all. */
  readonly health?: () => Health;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /**
   * Which peers' `X-Forwarded-*` headers Express believes (`TRUST_PROXY`): `req.ip`, `req.protocol`
   * and `req.host`, which the per-IP rate limit and the embedded issuer read. None when absent.
   */
  readonly trustProxy?: TrustProxy;
  /** The API routes; absent in a consumer-only process, which serves health, readiness and metrics only. */
  readonly api?: ApiRoutes;
}

/** What the API routes (REST, GraphQL, the issuer) are served from. */
export interface ApiRoutes {
  readonly log: ResultStore;
  readonly starter: TestStarter;
  /**
   * The GraphQL endpoint: serves an operation the edge has authenticated (`principalOf`), counted
   * and parsed (`req.body`), under the request's id.
   */
  readonly graphql: RequestHandler;
  readonly verifyAccessToken: VerifyAccessToken;
  readonly access: AccessPolicy;
  /** Budgets per principal on /graphql and /tests, per client IP on the issuer's sign-in routes. */
  readonly rateLimits: RateLimits;
  /** Mounted before the API routes (the embedded authorization server), when there is one. */
  readonly issuer?: RequestHandler;
  /** Exact origins whose pages may call the API (CORS); none when absent. */
  readonly corsAllowedOrigins?: readonly string[];
  /** GraphiQL at `GET /graphql` for browsers; when absent, browsers get a 404 there. */
  readonly graphiql?: GraphiqlOptions;
  /** The live dashboard at `/dashboard/`; when absent, a 404 there. */
  readonly dashboard?: DashboardOptions;
}

/** The answer of the liveness probe: unhealthy only when the process cannot recover by itself. */
export interface Health {
  readonly healthy: boolean;
  /** One entry per part watched: `ok`, or why the process is wedged. */
  readonly checks: Readonly<Record<string, string>>;
}

/** Creates the Express application. */
export function createHttpApp(options: HttpAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Express's own parser (proxy-addr): a hop count, or addresses and CIDRs matched per peer.
  const trust = options.trustProxy ?? false;
  app.set('trust proxy', Array.isArray(trust) ? [...trust] : trust);

  app.use(assignRequestId);
  app.use(securityHeaders);
  app.use(options.metrics.timeRequests);

  app.get('/metrics', async (_req, res) => {
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });

  app.get('/healthz', (_req, res) => {
    const health = options.health?.() ?? { healthy: true, checks: {} };
    res
      .status(health.healthy ? 200 : 503)
      .setHeader('Cache-Control', 'no-store')
      .json({ status: health.healthy ? 'ok' : 'unhealthy', checks: health.checks });
  });

  app.get('/readyz', async (_req, res) => {
    const readiness = await options.readiness();
    res
      .status(readiness.ready ? 200 : 503)
      .setHeader('Cache-Control', 'no-store')
      .json({ status: readiness.ready ? 'ready' : 'not ready', checks: readiness.checks });
  });

  if (options.api !== undefined) mountApi(app, options.api);

  app.use((req: Request, res: Response) => {
    sendProblem(res, 'NOT_FOUND', `Nothing at ${req.method} ${req.path}.`, { instance: req.originalUrl });
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    // On /graphql a GraphQL error body in the type asked for, a problem document elsewhere (send-refusal.ts).
    if (isServiceError(error)) {
      // Its details are safe to show (a limit, an argument's name), as extension members.
      sendRefusal(req, res, error);
      return;
    }
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // body-parser's errors: malformed JSON (400), too large (413), wrong charset (415).
      const code = (error as { type?: unknown }).type === 'entity.too.large' ? 'PAYLOAD_TOO_LARGE' : 'BAD_USER_INPUT';
      sendRefusal(req, res, new ServiceError(code, (error as Error).message), status);
      return;
    }
    const requestId = requestIdOf(res);
    options.logger.error({ err: error, requestId, method: req.method, path: req.path }, 'unexpected error in an HTTP request');
    sendRefusal(req, res, new ServiceError('INTERNAL_SERVER_ERROR', 'Internal server error', { details: { requestId } }));
  });

  return app;
}

/** REST twins of the GraphQL operations, the GraphQL endpoint, and the issuer before them. */
function mountApi(app: express.Express, api: ApiRoutes): void {
  if (api.issuer !== undefined) {
    // Password guessing and client-secret guessing are slowed per client IP; so are new sign-ins,
    // each of which the issuer keeps (an interaction, with its request) until it expires or its
    // store, in memory without Redis, drops the oldest: unslowed, anyone could flush everyone's.
    app.post(['/oauth/token', '/interaction/:uid'], rateLimit(api.rateLimits, 'auth', byClientIp));
    app.all('/oauth/authorize', rateLimit(api.rateLimits, 'auth', byClientIp));
    app.use(api.issuer);
  }
  // Every answer of the API, refusals included, is about a test at one moment and for one caller.
  app.use(['/graphql', '/tests'], noStore);
  // Before authentication: preflights carry no token. The issuer answers CORS for its own routes.
  app.use(['/graphql', '/tests'], createCors(api.corsAllowedOrigins ?? []));

  // Counted once the principal is known: a request with a bad token costs nobody's budget.
  const authenticated = [authenticate(api.verifyAccessToken), rateLimit(api.rateLimits, 'api', byPrincipal)];
  const requireScope =
    (scope: string): RequestHandler =>
    (req, res, next) => {
      try {
        api.access.requireScope(principalOf(res), scope);
        next();
      } catch (error) {
        if (isServiceError(error)) sendAuthError(req, res, error);
        else next(error);
      }
    };

  // The body is the input; its size is checked by the starter, as for `startTest`. The parser's own
  // limit only stops a body no input could fit in (whitespace allowed for).
  const startBody = express.json({ limit: 2 * api.starter.maxInputBytes, strict: false });
  app.post('/tests', ...authenticated, requireScope(SCOPES.write), startBody, async (req, res) => {
    const input = parseStartInput(req);
    // A retry-safe start names its correlation id (a UUID of the caller's), as `startTest(correlationId:)` does.
    const chosen = req.get('Idempotency-Key');
    const { correlationId, test } = await api.starter.start(input, principalOf(res).subject, chosen);
    res
      .status(202)
      .location(`/tests/${encodeURIComponent(correlationId)}`)
      .json({ correlationId, status: test.status, links: { self: `/tests/${encodeURIComponent(correlationId)}` } });
  });

  // One page of the test's messages, as GraphQL's `messages` reads: its summary first, for the
  // ownership check, then that page alone.
  app.get('/tests/:correlationId', ...authenticated, requireScope(SCOPES.read), async (req, res) => {
    // Either spelling of a UUID names the one test.
    const correlationId = canonicalCorrelationId(req.params.correlationId as string);
    const range = messageQuery(req.query, correlationId);
    const [test] = await api.log.getMany([correlationId]);
    // Another subject's test is answered exactly like an unknown one, and none of its messages is read.
    const page = test !== null && test !== undefined && api.access.canSee(principalOf(res), test) ? await api.log.messages(correlationId, range) : null;
    if (test === null || test === undefined || page === null) {
      sendProblem(res, 'NOT_FOUND', `No test has the correlation id "${correlationId}".`, { instance: req.originalUrl });
      return;
    }
    // Serialized as res.json would, with each stored payload's text copied as it is (`domain/json-text.ts`).
    res.type('json').send(stringifyWithText(testToJson(test, page, range)));
  });

  const graphiql = api.graphiql ?? { enabled: false, signInClientId: null, signInScope: '' };
  app.use(createGraphiqlRoutes(graphiql));
  app.use(createDashboardRoutes(api.dashboard ?? { enabled: false, signInClientId: null, signInScope: '' }));
  // A browser asking for a page gets GraphiQL (or a 404 saying it is off) without a token.
  const page = createGraphiqlPage(graphiql);
  app.get('/graphql', (req, res, next) => (wantsGraphiqlPage(req) ? page(req, res, next) : next()));
  // Every operation is authenticated, counted and parsed here, then served by the endpoint.
  app.all('/graphql', ...authenticated, express.json({ limit: '1mb' }), api.graphql);
}

/** Marks an answer of the API not to be kept by any cache (one URL serves every GraphQL operation, and a test changes). */
function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/** The body of `POST /tests`: empty, or `{ "name"?: string, "parameters"?: any JSON }`. */
function parseStartInput(req: Request): unknown {
  const body: unknown = req.body;
  if (body === undefined) return null; // no body, or not JSON: start with no input
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ServiceError('BAD_USER_INPUT', 'The body must be a JSON object: { "name"?: string, "parameters"?: any }.');
  }
  const unknown = Object.keys(body).filter((key) => key !== 'name' && key !== 'parameters');
  if (unknown.length > 0) throw new ServiceError('BAD_USER_INPUT', `Unknown field(s): ${unknown.join(', ')}. Allowed: name, parameters.`);
  const { name } = body as { name?: unknown };
  if (name !== undefined && name !== null && typeof name !== 'string') throw new ServiceError('BAD_USER_INPUT', 'name must be a string.');
  return body;
}
