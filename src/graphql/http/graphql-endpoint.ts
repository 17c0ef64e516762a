/**
 * `/graphql` as one Express handler that chooses by the request's `Accept` header: a browser's
 * page request gets GraphiQL (no token needed), a request that accepts `text/event-stream` is
 * served over SSE (graphql-sse), and anything else by Apollo Server. Every operation first passes
 * the HTTP edge's guard (authentication, the rate limit, the JSON body parser), and runs under the
 * request id the edge assigned.
 */
import { expressMiddleware } from '@as-integrations/express5';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../auth/principal.js';
import { withRequestId } from '../../base/request-id.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { GraphQLSse } from '../sse/sse-server.js';
import type { HttpGraphQLServer } from './apollo-server.js';
import type { PendingFill, ResponseCache } from './response-cache.js';

/** How a request to `/graphql` is served. */
export type GraphQLRoute = 'page' | 'event-stream' | 'http';

/** Options of {@link createGraphQLEndpoint}. */
export interface GraphQLEndpointOptions {
  /** The started Apollo Server. */
  readonly http: HttpGraphQLServer;
  /** The pipeline Apollo Server was built on: its context factory. */
  readonly pipeline: OperationPipeline;
  readonly sse: GraphQLSse;
  /** Answers a browser's page request (GraphiQL, or a 404 saying it is off). */
  readonly page: RequestHandler;
  /** Run in order before any operation: they answer the request themselves to refuse it. */
  readonly guard: readonly RequestHandler[];
  /** The principal the guard verified. */
  readonly principalOf: (res: Response) => Principal;
  /** The request id the HTTP edge assigned. */
  readonly requestIdOf: (res: Response) => string;
  /** Answers of test reads kept for callers of the same visibility; none when absent. */
  readonly responseCache?: ResponseCache;
}

/** The route of a request: see the file header. */
export function routeOf(req: Request): GraphQLRoute {
  if (req.method === 'GET' && req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html') return 'page';
  return acceptsEventStream(req) ? 'event-stream' : 'http';
}

/** Whether a request lists `text/event-stream` among the types it accepts. */
function acceptsEventStream(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((type) => type.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}

/** Creates the handler; mount it at the root of the app (it answers `/graphql` only). */
export function createGraphQLEndpoint(options: GraphQLEndpointOptions): RequestHandler {
  const { responseCache } = options;
  // The fill of each request that may be kept, for the context Apollo Server asks for.
  const fills = new WeakMap<Response, PendingFill>();
  const apollo = expressMiddleware(options.http, { context: async ({ res }) => options.pipeline.createContext(options.principalOf(res), undefined, fills.get(res)?.fill) });
  const serveHttp = async (req: Request, res: Response, next: NextFunction) => {
    if (responseCache === undefined) return apollo(req, res, next);
    const principal = options.principalOf(res);
    if (responseCache.serve(req, res, principal)) return;
    const pending = responseCache.begin(req, principal);
    if (pending === undefined) return apollo(req, res, next);
    fills.set(res, pending);
    await apollo(req, res, next);
    pending.finish(res);
  };
  return (req, res, next) => {
    if (req.path !== '/graphql') return next();
    const route = routeOf(req);
    if (route === 'page') return options.page(req, res, next);
    // One URL serves every operation, so nothing on it may be cached by URL.
    res.setHeader('Cache-Control', 'no-store');
    runGuard(options.guard, req, res, next, () =>
      withRequestId(options.requestIdOf(res), () => (route === 'event-stream' ? options.sse.handle(req, res, options.principalOf(res)) : serveHttp(req, res, next))),
    );
  };
}

/** Runs `guard` in order, then `done`; a guard that answers (or fails) ends the request there. */
function runGuard(guard: readonly RequestHandler[], req: Request, res: Response, next: NextFunction, done: () => unknown): void {
  const step = (index: number) => (error?: unknown) => {
    if (error !== undefined && error !== 'route') return next(error);
    const handler = guard[index];
    if (handler === undefined) {
      Promise.resolve()
        .then(done)
        .catch((failure: unknown) => next(failure));
      return;
    }
    try {
      const pending: unknown = handler(req, res, step(index + 1));
      if (pending instanceof Promise) pending.catch((failure: unknown) => next(failure));
    } catch (failure) {
      next(failure);
    }
  };
  step(0)();
}
