/**
 * GraphQL over Server-Sent Events (the graphql-sse protocol, distinct connections mode) on the
 * `/graphql` path, for requests that accept `text/event-stream`: protocol glue around the operation
 * pipeline (`../pipeline/operation-pipeline.ts`), which HTTP (Apollo Server) and WebSocket share.
 *
 * - The HTTP edge authenticates the request (`Authorization: Bearer`, 401 otherwise), applies CORS
 *   and counts it against the principal's `api` budget before it gets here.
 * - Each operation is prepared by the lifecycle (`../pipeline/operation-lifecycle.ts`): its
 *   plugins' budgets, document resolution, parse (cached), validation with every limit,
 *   admission (scope, cost) and context. A refusal before the stream opens is an
 *   HTTP answer with its status, its reason phrase (graphql-sse's client shows it) and a GraphQL
 *   error body in the JSON type the endpoint negotiated, as for any HTTP request.
 * - The caps are the WebSocket's: at most `maxStreamsPerPrincipal` streams open at once, and the
 *   lifecycle's budget of operations (shared with graphql-ws).
 * - Every message event carries its cursor as the event `id:`; a client that reconnects with
 *   `Last-Event-ID` resumes right after it (the pipeline's context carries it to `testMessages`).
 * - A subscription's results are pushed by the fan-out hub (`../fanout/`), which writes each
 *   `next` event to the response itself (`sse-push-sink.ts`' framing), once the response head is out; the
 *   response's buffer is the one backpressure point (a subscriber over it pauses and catches up
 *   from the store), and a response that stays over it for `drainTimeoutMs` (a client that stopped
 *   reading) is cut, so it holds no memory for longer.
 * - The stream ends at the token's expiry with an UNAUTHENTICATED error event, and with the error
 *   when its source fails (`sse-stream.ts`).
 */
import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { createHandler, type Request as SseRequest, type Response as SseResponse, type ResponseBody } from 'graphql-sse';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { InvalidTokenError } from '../../auth/auth-error.js';
import type { Principal } from '../../auth/principal.js';
import { forgetBearer } from '../../auth/bearer.js';
import { flattenHead } from '../fanout/flat-head.js';
import { graphQLErrorBody, ServiceError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { currentRequestId, withRequestId } from '../../base/request-id.js';
import { asGraphQLError, clientErrors } from '../pipeline/format-error.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { PreparedOperation } from '../pipeline/operation-plugin.js';
import { createPrincipalSlots } from '../pipeline/principal-slots.js';
import { endOnFailure } from '../pipeline/stream-endings.js';
import { streamRefusal } from '../pipeline/stream-refusal.js';
import { SSE_FRAMING } from './sse-push-sink.js';
import { createResponsePushSink } from '../fanout/response-push-sink.js';
import { endingSseStream } from './sse-stream.js';
import { grantOf } from '../fanout/delivery-notes.js';
import type { HttpStreamOptions } from '../fanout/http-stream-options.js';

/** Options of {@link createGraphQLSse}. */
export interface GraphQLSseOptions extends HttpStreamOptions {
  readonly logger: Logger;
}

/** The SSE endpoint, mounted by the HTTP edge behind its authentication. */
export interface GraphQLSse {
  /**
   * Serves one authenticated request the endpoint chose to stream; `req.body` is the parsed JSON
   * body, if any, and `refusalType` the media type of a refusal before the stream opens (the
   * GraphQL response type the request's `Accept` prefers; `application/json` by default).
   */
  handle(req: IncomingMessage & { body?: unknown }, res: ServerResponse, principal: Principal, refusalType?: string): Promise<void>;
  /** Open streams, for metrics and tests. */
  readonly streams: number;
  /** Cuts every open stream (its clients reconnect with `Last-Event-ID` elsewhere) and refuses new ones with 503 SHUTTING_DOWN. */
  dispose(): Promise<void>;
}

/** What the binding keeps for one request. */
interface Stream {
  readonly principal: Principal;
  readonly res: ServerResponse;
  readonly requestId: string;
  readonly resumeAfter: string | undefined;
  /** The content type of a refusal before the stream opens. */
  readonly refusalType: string;
  /** The request's `extensions` (a delivery guarantee asked for). */
  extensions?: Record<string, unknown> | undefined;
  /** Starts the hub's pushes of the stream's subscription, once the response head is out. */
  start?: () => void;
}

type Context = Record<PropertyKey, unknown>;
type Handler = ReturnType<typeof createHandler<IncomingMessage, Stream, Context>>;

/** Creates the SSE binding of the pipeline. */
export function createGraphQLSse(options: GraphQLSseOptions): GraphQLSse {
  const log = options.logger.child({ component: 'sse' });
  const responses = new Set<ServerResponse>();
  const handler = createOperationHandler(options);
  let disposed = false;
  return {
    get streams() {
      return responses.size;
    },
    async handle(req, res, principal, refusalType = 'application/json') {
      const refusalContentType = `${refusalType}; charset=utf-8`;
      // Verified: the request stays open as long as the stream, and need not keep the token's text.
      forgetBearer(req);
      if (disposed) {
        // Draining: the load balancer sends new streams elsewhere once readiness says so; one that
        // still arrives is told to reconnect rather than opened and cut.
        const error = new ServiceError('SHUTTING_DOWN', 'The service is shutting down: reconnect to resume (Last-Event-ID).');
        res.writeHead(error.httpStatus, STATUS_CODES[error.httpStatus], { 'content-type': refusalContentType, 'retry-after': '1' });
        res.end(JSON.stringify(graphQLErrorBody(error)));
        return;
      }
      const lastEventId = req.headers['last-event-id'];
      const stream: Stream = {
        principal,
        res,
        requestId: currentRequestId() ?? randomUUID(),
        resumeAfter: typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : undefined,
        refusalType: refusalContentType,
      };
      const request: SseRequest<IncomingMessage, Stream> = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: {
          // The endpoint has already chosen this transport by content negotiation; graphql-sse
          // takes only the exact value as a request for a stream.
          get: (key) => (key === 'accept' ? 'text/event-stream' : headerValue(req.headers[key])),
        },
        body: () => (req.body ?? null) as Record<PropertyKey, unknown> | null,
        raw: req,
        context: stream,
      };
      responses.add(res);
      res.on('close', () => responses.delete(res));
      const [body, init]: SseResponse = await handler(request);
      res.writeHead(init.status, init.statusText || STATUS_CODES[init.status], responseHeaders(init, refusalContentType));
      flattenHead(res);
      stream.start?.();
      await writeBody(res, body, log);
      // Ended, but what it holds must still leave: a client that never reads is cut after the bound.
      cutIfNotDrained(res, options.drainTimeoutMs);
    },
    async dispose() {
      disposed = true;
      for (const res of responses) res.destroy();
    },
  };
}

/** graphql-sse's handler, with every operation prepared by the pipeline. */
function createOperationHandler(options: GraphQLSseOptions): Handler {
  const { pipeline } = options;
  const slots = options.slots ?? createPrincipalSlots(options.maxStreamsPerPrincipal);
  const streamOf = new WeakMap<ExecutionArgs, Stream>();
  return createHandler<IncomingMessage, Stream, Context>({
    // Distinct connections only (one operation per stream): no single-connection reservations. By
    // default graphql-sse would also look the client's `token` (header or query) up in a plain
    // object, where `__proto__` or `constructor` finds the prototype's member and fails with a 500.
    authenticate: () => null,
    // Validation is the pipeline's, in onSubscribe.
    validate: () => [],
    onSubscribe: async (req, params) => {
      const stream = req.context;
      try {
        if (!slots.take(stream.principal, stream.res)) {
          return refusal(
            [
              asGraphQLError(
                new ServiceError('TOO_MANY_SUBSCRIPTIONS', `At most ${options.maxStreamsPerPrincipal} event streams may be open at once per caller.`),
              ),
            ],
            pipeline,
            stream,
          );
        }
        // graphql-sse keeps only the standard parameters; a document id travels in the body beside them.
        const documentId = (req.raw as { body?: { documentId?: unknown } }).body?.documentId;
        const prepared = await pipeline.lifecycle.prepare({
          principal: stream.principal,
          transport: 'sse',
          params: { ...params, documentId },
          resumeAfter: stream.resumeAfter,
        });
        if (Array.isArray(prepared)) return refusal(prepared, pipeline, stream);
        streamOf.set(prepared, stream);
        stream.extensions = params.extensions;
        return prepared as ExecutionArgs & { contextValue: Context };
      } catch (error) {
        // Unexpected (a failing dependency, a bug): refused like any operation before its stream
        // opens, with the error masked and logged under the request id, rather than failing the request.
        return refusal([asGraphQLError(error)], pipeline, stream, error instanceof ServiceError ? error.httpStatus : 500);
      }
    },
    execute: (args) =>
      endOnFailure(() => withRequestId(streamOf.get(args)!.requestId, () => pipeline.lifecycle.execute(args as PreparedOperation)), endedWithError),
    subscribe: (args) =>
      endOnFailure(async () => {
        const stream = streamOf.get(args)!;
        const sink = createResponsePushSink({
          res: stream.res,
          framing: SSE_FRAMING,
          coalescer: options.coalescer,
          maxBufferedBytes: options.maxBufferedBytes,
          drainTimeoutMs: options.drainTimeoutMs,
          withClientErrors: (result) => ({ ...result, errors: clientErrors(result.errors ?? [], stream.requestId, pipeline.lifecycle.formatError) }),
        });
        const subscription = await pipeline.hub.subscribe(args, sink, grantOf(args, stream.extensions, options.delivery));
        if (!('ended' in subscription)) return subscription;
        stream.start = () => subscription.start();
        return endingSseStream(subscription, {
          endsAt: stream.principal.expiresAt,
          expired: () => ({ errors: [asGraphQLError(new InvalidTokenError('the token has expired'))] }),
          failed: (error) => ({ errors: [asGraphQLError(error)] }),
        });
      }, endedWithError),
    onNext: (_ctx, req, result) => {
      const errors = (result as ExecutionResult).errors;
      if (errors === undefined || errors.length === 0) return undefined;
      return { ...result, errors: clientErrors(errors, req.context.requestId, pipeline.lifecycle.formatError) } as unknown as ExecutionResult;
    },
  });
}

/** How a stream that failed before its first result ends over SSE: with the error as its one result, masked in onNext. */
function endedWithError(error: unknown): ExecutionResult {
  return { errors: [asGraphQLError(error)] };
}

/** A refusal before the stream opens, as graphql-sse's handler answers it (`../pipeline/stream-refusal.ts`). */
function refusal(errors: readonly GraphQLError[], pipeline: OperationPipeline, stream: Stream, fallbackStatus = 400): SseResponse {
  const refused = streamRefusal(errors, {
    requestId: stream.requestId,
    contentType: stream.refusalType,
    formatError: pipeline.lifecycle.formatError,
    fallbackStatus,
  });
  return [refused.body, { status: refused.status, statusText: refused.statusText, headers: refused.headers }];
}

/** Writes graphql-sse's body (its first comment, keep-alives, a query's result, a last error, `complete`). */
async function writeBody(res: ServerResponse, body: ResponseBody | null, log: Logger): Promise<void> {
  if (body === null || typeof body === 'string') {
    res.end(body ?? undefined);
    return;
  }
  const stop = () => void body.return(undefined);
  res.on('close', stop);
  try {
    for await (const chunk of body) {
      if (res.writableEnded || res.destroyed) break;
      res.write(chunk);
    }
  } catch (error) {
    log.error({ err: error }, 'event stream failed');
  } finally {
    res.off('close', stop);
    if (!res.writableEnded) res.end();
  }
}

/** Destroys an ended response whose last bytes have not left within `timeoutMs`. */
function cutIfNotDrained(res: ServerResponse, timeoutMs: number): void {
  if (res.writableFinished || res.destroyed) return;
  const cut = setTimeout(() => res.destroy(), timeoutMs);
  cut.unref();
  const done = () => clearTimeout(cut);
  res.once('finish', done);
  res.once('close', done);
}

/**
 * graphql-sse's headers, with a JSON refusal of its own (a request it cannot read) in the negotiated
 * type, and `no-store` as on every answer of /graphql: graphql-sse marks a stream `no-cache`, which
 * lets a cache store it (and `writeHead`'s headers win over those set before).
 */
function responseHeaders(init: SseResponse[1], contentType: string): Record<string, string> {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined), 'cache-control': 'no-store' };
  if (init.status < 400 || !/^application\/json\b/i.test(headers['content-type'] ?? '')) return headers;
  return { ...headers, 'content-type': contentType };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
