/**
 * The GraphQL endpoint the HTTP edge mounts at `/graphql` (src/http/app.ts), once it has answered
 * a browser's page request, authenticated the operation, counted it against the caller's budget
 * and parsed its body, under the request id it assigned: a request whose `Accept` chooses an
 * stream (`transport-choice.ts`: content negotiation, then the operation's type) is served over
 * SSE (graphql-sse) or Apollo's multipart subscription protocol; anything else arrives at the
 * lifecycle (`lifecycle.arrive`: an answer a plugin kept, the response cache's, is sent as is), is
 * prepared by it (`lifecycle.prepare`: start, document resolution, parse, validation, admission;
 * a refusal is answered here, with its status, in Apollo Server's body and content type) and is
 * handed to Apollo Server with the prepared operation, which the lifecycle executes
 * (`apollo-server.ts`).
 *
 * Only GET and POST are served. graphql-sse's single connection mode (its client's
 * `singleConnection: true`) reserves a stream with PUT and ends operations with DELETE; it is
 * refused with 405 and a message naming the mode that is served (distinct connections, the
 * client's default), in the GraphQL response type the client prefers.
 */
import { expressMiddleware } from '@as-integrations/express5';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { GraphQLError } from 'graphql';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { graphQLErrorBody, ServiceError } from '../../base/errors.js';
import { acceptsGraphQLResponse, GRAPHQL_RESPONSE_TYPES, graphQLResponseType, singleResultType } from '../../base/graphql-response-type.js';
import { currentRequestId } from '../../base/request-id.js';
import type { GraphQLContext } from '../pipeline/context.js';
import { asGraphQLError, clientErrors, isUnexpected, type FormatError } from '../pipeline/format-error.js';
import { refusalError } from '../pipeline/refusal-error.js';
import { refusalHead } from '../pipeline/stream-refusal.js';
import { readOperationRequest } from './operation-request.js';
import { resultBody } from './result-body.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { ArrivingOperation, KeptAnswer, OperationRequest, PreparedOperation } from '../pipeline/operation-plugin.js';
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
  return {
    principal,
    method: req.method,
    json: json ? (body as OperationRequest) : undefined,
    accept: req.headers.accept,
    // Negotiated only when asked (the response cache keeping an answer).
    get contentType() {
      return singleResultType((types) => req.accepts(types));
    },
  };
}

/** Sends a kept answer or a refusal the way Apollo Server's Express integration sends its own (Express's `send`), so its bytes and headers are the same. */
function send(res: Response, status: number, answer: KeptAnswer): void {
  res.setHeader('content-type', answer.contentType);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.status(status).send(answer.body);
}

/**
 * What makes a request unservable whatever its operation, checked before the operation is prepared
 * (so that none runs, and a refused one is answered alike): a GET with a body type other than JSON
 * (415), and an `Accept` that takes neither GraphQL response type (406), as Apollo Server checks
 * them (the second only once the operation had run).
 */
function unservableRequest(req: Request): GraphQLError | undefined {
  const contentType = req.headers['content-type'];
  // Its media type alone, read leniently (`application/json;` is JSON too).
  if (req.method === 'GET' && contentType !== undefined && contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json')
    return refusalError(new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'GET requests may not have a content-type header other than application/json.'));
  if (!acceptsGraphQLResponse((types) => req.accepts(types))) {
    const message = `The Accept header takes neither GraphQL response type: ${GRAPHQL_RESPONSE_TYPES.join(', ')}.`;
    return refusalError(new ServiceError('NOT_ACCEPTABLE', message));
  }
  return undefined;
}

/**
 * The answer to an operation the lifecycle refused (or whose parameters cannot be read), as Apollo
 * Server words its own; an unexpected error (a failing dependency, a bug) is 500, masked and logged
 * by the error edge.
 */
function refusal(req: Request, errors: readonly GraphQLError[], formatError: FormatError): { status: number; answer: KeptAnswer } {
  const { status, headers } = refusalHead(errors, isUnexpected(errors[0]) ? 500 : 400);
  const contentType = `${graphQLResponseType((types) => req.accepts(types))}; charset=utf-8`;
  const body = resultBody({ errors: clientErrors(errors, currentRequestId() ?? randomUUID(), formatError) });
  return { status, answer: { body, contentType, headers } };
}

/** Creates the handler the HTTP edge mounts at `/graphql`, behind its authentication, budget and body parser. */
export function createGraphQLEndpoint(options: GraphQLEndpointOptions): RequestHandler {
  const { lifecycle } = options.pipeline;
  // The context of each request prepared, for Apollo Server to run it with.
  const contexts = new WeakMap<Response, GraphQLContext>();
  const apollo = expressMiddleware(options.http, {
    context: async ({ res }) => contexts.get(res) as GraphQLContext,
  });
  const prepare = async (req: Request, arrival: ArrivingOperation): Promise<PreparedOperation | GraphQLError[]> => {
    const unservable = unservableRequest(req);
    if (unservable !== undefined) return [unservable];
    const params = readOperationRequest(req);
    if (params instanceof ServiceError) return [asGraphQLError(params)];
    try {
      return await lifecycle.prepare({ principal: arrival.principal, transport: 'http', params, method: req.method, arrival });
    } catch (error) {
      return [asGraphQLError(error)];
    }
  };
  const serveHttp = async (req: Request, res: Response, next: NextFunction) => {
    const arrival = arrivingOf(req, options.principalOf(res));
    const kept = lifecycle.arrive(arrival);
    if (kept !== undefined) return send(res, 200, kept);
    const prepared = await prepare(req, arrival);
    if (Array.isArray(prepared)) {
      const refused = refusal(req, prepared, lifecycle.formatError);
      return send(res, refused.status, refused.answer);
    }
    contexts.set(res, options.pipeline.createContext(arrival.principal, prepared));
    await apollo(req, res, next);
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
