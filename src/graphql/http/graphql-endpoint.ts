/**
 * The GraphQL endpoint the HTTP edge mounts at `/graphql` (src/http/app.ts), once it has answered
 * a browser's page request, authenticated the operation, counted it against the caller's budget
 * and parsed its body, under the request id it assigned: a request that accepts
 * `text/event-stream` is served over SSE (graphql-sse), anything else by Apollo Server, through
 * the response cache when it may be kept.
 */
import { expressMiddleware } from '@as-integrations/express5';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../auth/principal.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { GraphQLSse } from '../sse/sse-server.js';
import type { HttpGraphQLServer } from './apollo-server.js';
import type { PendingFill, ResponseCache } from './response-cache.js';

/** Options of {@link createGraphQLEndpoint}. */
export interface GraphQLEndpointOptions {
  /** The started Apollo Server. */
  readonly http: HttpGraphQLServer;
  /** The pipeline Apollo Server was built on: its context factory. */
  readonly pipeline: OperationPipeline;
  readonly sse: GraphQLSse;
  /** The principal the HTTP edge verified. */
  readonly principalOf: (res: Response) => Principal;
  /** Answers of test reads kept for callers of the same visibility; none when absent. */
  readonly responseCache?: ResponseCache;
}

/** Whether a request lists `text/event-stream` among the types it accepts. */
function acceptsEventStream(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((type) => type.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}

/** Creates the handler the HTTP edge mounts at `/graphql`, behind its authentication, budget and body parser. */
export function createGraphQLEndpoint(options: GraphQLEndpointOptions): RequestHandler {
  const { responseCache } = options;
  // The fill of each request that may be kept, for the context Apollo Server asks for.
  const fills = new WeakMap<Response, PendingFill>();
  const apollo = expressMiddleware(options.http, {
    context: async ({ res }) => options.pipeline.createContext(options.principalOf(res), undefined, fills.get(res)?.fill),
  });
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
  return async (req, res, next) => {
    try {
      if (acceptsEventStream(req)) await options.sse.handle(req, res, options.principalOf(res));
      else await serveHttp(req, res, next);
    } catch (error) {
      next(error);
    }
  };
}
