/**
 * The GraphQL endpoint the HTTP edge mounts at `/graphql` (src/http/app.ts), once it has answered
 * a browser's page request, authenticated the operation, counted it against the caller's budget
 * and parsed its body, under the request id it assigned: a request whose `Accept` chooses an
 * stream (`transport-choice.ts`: content negotiation, then the operation's type) is served over
 * SSE (graphql-sse) or Apollo's multipart subscription protocol; anything else arrives at the lifecycle (`lifecycle.arrive`: an answer a
 * plugin kept, the response cache's, is sent as is) and is otherwise run by Apollo Server, followed
 * by the plugins' observer when one asked to.
 *
 * Only GET and POST are served. graphql-sse's single connection mode (its client's
 * `singleConnection: true`) reserves a stream with PUT and ends operations with DELETE; it is
 * refused with 405 and a message naming the mode that is served (distinct connections, the
 * client's default), in the GraphQL response type the client prefers.
 */
import { expressMiddleware } from '@as-integrations/express5';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../auth/principal.js';
import { graphQLErrorBody, ServiceError } from '../../base/errors.js';
import { graphQLResponseType } from '../../base/graphql-response-type.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { ArrivingOperation, KeptAnswer, OperationObserver, OperationRequest } from '../pipeline/operation-plugin.js';
import type { GraphQLMultipart } from '../multipart/multipart-server.js';
import type { GraphQLSse } from '../sse/sse-server.js';
import type { HttpGraphQLServer } from './apollo-server.js';
import { streamingTransport } from './transport-choice.js';

/** Options of {@link createGraphQLEndpoint}. */
export interface GraphQLEndpointOptions {
  /** The started Apollo Server. */
  readonly http: HttpGraphQLServer;
  /** The pipeline Apollo Server was built on: its lifecycle and context factory. */
  readonly pipeline: OperationPipeline;
  readonly sse: GraphQLSse;
  /** Apollo's multipart subscription protocol. */
  readonly multipart: GraphQLMultipart;
  /** The principal the HTTP edge verified. */
  readonly principalOf: (res: Response) => Principal;
}

const SERVED_METHODS = 'GET, POST';

/** The refusal of a method other than GET and POST (see the file header). */
function refuseMethod(req: Request, res: Response): void {
  const singleConnection = req.method === 'PUT' || req.method === 'DELETE';
  const error = new ServiceError(
    'METHOD_NOT_ALLOWED',
    singleConnection
      ? `${req.method} is not served: GraphQL over SSE is served in its distinct connections mode only (graphql-sse's client with singleConnection: false, the default), one operation per GET or POST.`
      : `${req.method} is not served: send operations with GET or POST.`,
  );
  res
    .status(error.httpStatus)
    .setHeader('allow', SERVED_METHODS)
    .type(graphQLResponseType((types) => req.accepts(types)))
    .json(graphQLErrorBody(error));
}

/** The request as the lifecycle's `arrive` step sees it. */
function arrivingOf(req: Request, principal: Principal): ArrivingOperation {
  const body: unknown = req.body;
  const json = req.method === 'POST' && req.is('application/json') && typeof body === 'object' && body !== null && !Array.isArray(body);
  return { principal, method: req.method, json: json ? (body as OperationRequest) : undefined, accept: req.headers.accept };
}

/** Sends a kept answer the way Apollo Server's Express integration sends its own (Express's `send`), so its bytes and headers are the same. */
function sendKept(res: Response, answer: KeptAnswer): void {
  res.setHeader('content-type', answer.contentType);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.status(200).send(answer.body);
}

/** Creates the handler the HTTP edge mounts at `/graphql`, behind its authentication, budget and body parser. */
export function createGraphQLEndpoint(options: GraphQLEndpointOptions): RequestHandler {
  const { lifecycle } = options.pipeline;
  // The observer of each request a plugin follows, for the context Apollo Server asks for.
  const observers = new WeakMap<Response, OperationObserver>();
  const apollo = expressMiddleware(options.http, {
    context: async ({ res }) => options.pipeline.createContext(options.principalOf(res), undefined, observers.get(res)),
  });
  const serveHttp = async (req: Request, res: Response, next: NextFunction) => {
    const arrival = lifecycle.arrive(arrivingOf(req, options.principalOf(res)));
    if (arrival === undefined) return apollo(req, res, next);
    if ('answer' in arrival) return sendKept(res, arrival.answer);
    observers.set(res, arrival.observer);
    await apollo(req, res, next);
    const contentType = res.getHeader('content-type');
    arrival.observer.finished(res.statusCode, typeof contentType === 'string' ? contentType : undefined);
  };
  return async (req, res, next) => {
    try {
      if (req.method !== 'GET' && req.method !== 'POST') return refuseMethod(req, res);
      const streaming = streamingTransport(req, lifecycle);
      if (streaming === undefined) return await serveHttp(req, res, next);
      await options[streaming].handle(
        req,
        res,
        options.principalOf(res),
        graphQLResponseType((types) => req.accepts(types)),
      );
    } catch (error) {
      next(error);
    }
  };
}
