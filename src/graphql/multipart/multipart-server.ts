/**
 * Apollo's multipart HTTP subscription protocol (`multipart/mixed; subscriptionSpec=1.0`) on the
 * `/graphql` path: what Apollo Client's plain `HttpLink` sends a subscription as, and what Apollo
 * Router speaks to its clients. Protocol glue around the operation pipeline, as graphql-sse's is:
 *
 * - The HTTP edge authenticates the request, applies CORS and CSRF prevention and counts it
 *   against the principal's `api` budget; the endpoint chose this transport by the request's
 *   `Accept` (`../http/transport-choice.ts`) for a subscription only.
 * - The operation is prepared by the lifecycle (transport `multipart`: the streaming transports'
 *   budget of operations, every limit, scope and cost); a refusal before the response opens is an
 *   HTTP answer with its status and a GraphQL error body in the JSON type the client asked for.
 * - Streams count against the same per-principal cap as SSE streams (`SSE_MAX_STREAMS`).
 * - The response is `multipart/mixed;boundary="graphql";subscriptionSpec=1.0`: every push is a
 *   part `{"payload": <result>}` written by the fan-out hub through the response sink
 *   (`../fanout/response-push-sink.ts`, the SSE stream's backpressure and cut), a heartbeat part
 *   `{}` leaves every `heartbeatMs` (5 s, as the protocol asks), and the response ends with the
 *   closing boundary.
 * - Every ending the service decides (the test expired, the token expired, the store failed) is a
 *   GraphQL error inside the last part's `payload`, never the protocol's top-level `errors`:
 *   clients treat those as transport failures, and these are answers, not failures to retry.
 * - A client that wants to resume after a dropped connection passes the last `cursor` it received
 *   as `testMessages(after:)`: the protocol has no `Last-Event-ID`.
 */
import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { InvalidTokenError } from '../../auth/auth-error.js';
import type { Principal } from '../../auth/principal.js';
import { forgetBearer } from '../../auth/bearer.js';
import { flattenHead } from '../fanout/flat-head.js';
import { ServiceError } from '../../base/errors.js';
import { currentRequestId, withRequestId } from '../../base/request-id.js';
import { stringifyWithText } from '../../domain/json-text.js';
import { grantOf } from '../fanout/delivery-notes.js';
import type { HttpStreamOptions } from '../fanout/http-stream-options.js';
import { createResponsePushSink, type ResponseFraming } from '../fanout/response-push-sink.js';
import { asGraphQLError, clientErrors } from '../pipeline/format-error.js';
import { createPrincipalSlots } from '../pipeline/principal-slots.js';
import { streamRefusal } from '../pipeline/stream-refusal.js';
import { endingSseStream } from '../sse/sse-stream.js';
import { readOperationRequest } from '../http/operation-request.js';
import type { PreparedOperation } from '../pipeline/operation-plugin.js';

/** The response's content type; its boundary is the one every part is framed with. */
export const MULTIPART_CONTENT_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0';
// Every part is followed by the boundary at once (the body opens with one): clients end a part where
// the next boundary starts, so a part that waited for the next one would reach them one push late.
const BOUNDARY = '\r\n--graphql';
const part = (json: string): string => `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${json}${BOUNDARY}`;
const CLOSING = '--\r\n';

/** Options of {@link createGraphQLMultipart}. */
export interface GraphQLMultipartOptions extends HttpStreamOptions {
  /** How often a heartbeat part leaves (default 5000, the protocol's). */
  readonly heartbeatMs?: number;
}

/** The multipart subscription endpoint, mounted by the HTTP edge behind its authentication. */
export interface GraphQLMultipart {
  /** Serves one authenticated subscription request; `refusalType` as for SSE. */
  handle(req: IncomingMessage & { body?: unknown }, res: ServerResponse, principal: Principal, refusalType?: string): Promise<void>;
  /** Open streams, for metrics and tests. */
  readonly streams: number;
  /** Cuts every open stream and refuses new ones with 503 SHUTTING_DOWN. */
  dispose(): Promise<void>;
}

/** The part of a result whose JSON text is `json`: `{"payload": <result>}`. */
const payloadPart = (json: string): string => part(`{"payload":${json}}`);
const MULTIPART_FRAMING: ResponseFraming = { key: Symbol('the multipart part'), frame: (_shared, json) => payloadPart(json) };

/** Creates the multipart binding of the pipeline. */
export function createGraphQLMultipart(options: GraphQLMultipartOptions): GraphQLMultipart {
  const { pipeline } = options;
  const slots = options.slots ?? createPrincipalSlots(options.maxStreamsPerPrincipal);
  const responses = new Set<ServerResponse>();
  let disposed = false;

  const refuse = (res: ServerResponse, errors: readonly GraphQLError[], requestId: string, refusalType: string, fallbackStatus = 400) => {
    const refused = streamRefusal(errors, {
      requestId,
      contentType: `${refusalType}; charset=utf-8`,
      formatError: pipeline.lifecycle.formatError,
      fallbackStatus,
    });
    res.writeHead(refused.status, refused.statusText, refused.headers).end(refused.body);
  };

  /** The operation's execution arguments and its request's extensions, or why it is refused. */
  const prepare = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse, principal: Principal) => {
    // Draining: the load balancer sends new requests elsewhere once readiness says so; one that
    // still arrives is told to subscribe again (in a second) rather than opened and cut.
    if (disposed)
      return [asGraphQLError(new ServiceError('SHUTTING_DOWN', 'The service is shutting down: subscribe again.', { details: { retryAfterSeconds: 1 } }))];
    const params = readOperationRequest(req);
    if (params instanceof ServiceError) return [asGraphQLError(params)];
    if (!slots.take(principal, res)) {
      const message = `At most ${options.maxStreamsPerPrincipal} event streams may be open at once per caller.`;
      return [asGraphQLError(new ServiceError('TOO_MANY_SUBSCRIPTIONS', message))];
    }
    const prepared = await pipeline.lifecycle.prepare({ principal, transport: 'multipart', params });
    return Array.isArray(prepared) ? prepared : { args: prepared, extensions: params.extensions ?? undefined };
  };

  return {
    get streams() {
      return responses.size;
    },
    async handle(req, res, principal, refusalType = 'application/json') {
      // Verified: the request stays open as long as the stream, and need not keep the token's text.
      forgetBearer(req);
      const requestId = currentRequestId() ?? randomUUID();
      let prepared: Awaited<ReturnType<typeof prepare>>;
      try {
        prepared = await prepare(req, res, principal);
      } catch (error) {
        // Unexpected (a failing dependency, a bug): masked and logged under the request id.
        refuse(res, [asGraphQLError(error)], requestId, refusalType, 500);
        return;
      }
      if (Array.isArray(prepared)) {
        refuse(res, prepared, requestId, refusalType);
        return;
      }
      responses.add(res);
      res.on('close', () => responses.delete(res));
      await stream(options, prepared.args, { res, principal, requestId, extensions: prepared.extensions });
    },
    async dispose() {
      disposed = true;
      for (const res of responses) res.destroy();
    },
  };
}

/** One open response. */
interface Streamed {
  readonly res: ServerResponse;
  readonly principal: Principal;
  readonly requestId: string;
  readonly extensions: Record<string, unknown> | undefined;
}

/** Opens the response and streams the operation's results on it until it ends or the client leaves. */
async function stream(options: GraphQLMultipartOptions, args: PreparedOperation, streamed: Streamed): Promise<void> {
  const { res, requestId } = streamed;
  const formatted = withClientErrors(options, requestId);
  const last = (result: ExecutionResult) => options.coalescer.write(res, payloadPart(stringifyWithText(formatted(result))));
  res.writeHead(200, STATUS_CODES[200], { 'content-type': MULTIPART_CONTENT_TYPE, 'cache-control': 'no-cache, no-store' });
  flattenHead(res);
  res.write(BOUNDARY);
  const heartbeat = setInterval(() => options.coalescer.write(res, part('{}')), options.heartbeatMs ?? 5_000);
  heartbeat.unref();
  try {
    if (args.operation?.operation !== 'subscription') {
      last(await withRequestId(requestId, async () => options.pipeline.lifecycle.execute(args)));
      return;
    }
    await pushes(options, args, streamed, last);
  } catch (error) {
    last({ errors: [asGraphQLError(error)] });
  } finally {
    clearInterval(heartbeat);
    if (!res.writableEnded && !res.destroyed) res.end(CLOSING);
  }
}

/** A result as this stream's client gets it: its errors through the lifecycle's edge, under the request's id. */
function withClientErrors(options: GraphQLMultipartOptions, requestId: string): (result: ExecutionResult) => object {
  return (result) =>
    result.errors === undefined ? result : { ...result, errors: clientErrors(result.errors, requestId, options.pipeline.lifecycle.formatError) };
}

/** The hub's pushes of a subscription, then its last result (why it ended), until the client leaves. */
async function pushes(options: GraphQLMultipartOptions, args: ExecutionArgs, streamed: Streamed, lastPart: (result: ExecutionResult) => void): Promise<void> {
  const { res, principal, requestId } = streamed;
  const sink = createResponsePushSink({
    res,
    framing: MULTIPART_FRAMING,
    coalescer: options.coalescer,
    maxBufferedBytes: options.maxBufferedBytes,
    drainTimeoutMs: options.drainTimeoutMs,
    withClientErrors: withClientErrors(options, requestId),
  });
  const subscription = await withRequestId(requestId, () => options.pipeline.hub.subscribe(args, sink, grantOf(args, streamed.extensions, options.delivery)));
  if (!('ended' in subscription)) {
    lastPart(subscription);
    return;
  }
  const ending = endingSseStream(subscription, {
    endsAt: principal.expiresAt,
    expired: () => ({ errors: [asGraphQLError(new InvalidTokenError('the token has expired'))] }),
    failed: (error) => ({ errors: [asGraphQLError(error)] }),
  });
  const leave = () => void ending.return?.(undefined);
  res.on('close', leave);
  subscription.start();
  try {
    for await (const last of ending) lastPart(last);
  } finally {
    res.off('close', leave);
  }
}
