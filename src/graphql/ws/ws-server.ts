/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the HTTP server's `/graphql` path: protocol
 * glue around the operation pipeline (`../pipeline/operation-pipeline.ts`), which HTTP (Apollo
 * Server) and SSE share.
 *
 * - The upgrade checks `Origin` (Cross-Site WebSocket Hijacking): a browser page may connect only
 *   from the service's own origin or an allowed one.
 * - The access token comes in `connection_init` (`{ authorization: "Bearer …" }` or `{ token }`); a
 *   bad one closes the socket with 4403, and the socket is closed when the token expires, so a
 *   subscription never outlives its token, unless the client renews it on the open socket with a
 *   `ping` that carries a fresh one (ws-session.ts). Operations before the acknowledgement get 4401.
 * - Each operation is prepared by the lifecycle (`../pipeline/operation-lifecycle.ts`), the steps
 *   Apollo Server takes over HTTP: its plugins' budgets, document resolution (an operation sent by
 *   id, whose `query` is then `""` since the protocol needs a string), parse (cached), validation
 *   with every limit, admission (scope, cost) and context; errors leave through the lifecycle's
 *   error edge. Each operation has its own request id, which an unexpected error's log line and masked error carry.
 * - An operation that fails (unexpectedly while it is prepared, or its stream, at once or later)
 *   ends alone with an `error` message; no hook rejects, since graphql-ws would then close the
 *   socket (4500) and every other operation on it.
 * - Backpressure is the socket's buffered bytes: past `maxBufferedBytes` waiting for a client, a
 *   subscription's pushes (`ws-push-sink.ts`) stop and its follower pauses, to catch up from the
 *   store once the socket drains; a frame of graphql-ws's own sent while the socket is over the
 *   mark is waited on until written (`ws-transport.ts`'s `send`); a socket that stays over the
 *   mark (`watchDrain`) is closed with SUBSCRIBER_TOO_SLOW.
 */
import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Context, SubscribePayload } from 'graphql-ws';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { principalKey, type Principal, type VerifyAccessToken } from '../../auth/principal.js';
import { isServiceError, ServiceError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { retryAfterSeconds, type RateLimits } from '../../rate-limits/rate-limits.js';
import { withRequestId } from '../../base/request-id.js';
import { asGraphQLError, clientErrors } from '../pipeline/format-error.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { PreparedOperation } from '../pipeline/operation-plugin.js';
import { createPrincipalSlots } from '../pipeline/principal-slots.js';
import { endOnFailure } from '../pipeline/stream-endings.js';
import type { WriteCoalescer } from '../fanout/write-coalescer.js';
import { createWebSocketPushSink } from './ws-push-sink.js';
import { untilEnded } from '../fanout/until-ended.js';
import { grantOf, type DeliveryGrant } from '../fanout/delivery-notes.js';
import { closeSocket } from './close-socket.js';
import { createWebSocketSessions, forgetToken, tokenExpired, tokenFrom, tokenRefused, type WebSocketSessions } from './ws-session.js';
import { serveGraphQLOverWebSocket, type WebSocketExtra } from './ws-transport.js';
import { refusalError } from '../pipeline/refusal-error.js';
import { startWsHeartbeat } from './ws-heartbeat.js';

/** Options of {@link attachGraphQLWebSocket}. */
export interface GraphQLWebSocketOptions {
  readonly httpServer: Server;
  readonly path: string;
  /** The operation pipeline: document resolution, rules, context, error edge, shared subscriptions. */
  readonly pipeline: OperationPipeline;
  readonly verifyAccessToken: VerifyAccessToken;
  /** Origins allowed besides the service's own (`*` for any). */
  readonly allowedOrigins: readonly string[];
  readonly maxSubscriptionsPerConnection: number;
  /** Largest incoming WebSocket message, in bytes. */
  readonly maxPayload: number;
  /** Bytes waiting to be sent to one client past which its operations wait for it to read. */
  readonly maxBufferedBytes: number;
  /** How long a socket may stay over `maxBufferedBytes` (a client that stopped reading) before it is closed. */
  readonly drainTimeoutMs?: number;
  /** Sockets one principal may hold open at once in this process; one more is closed with 4429. */
  readonly maxConnectionsPerPrincipal?: number;
  /** New connections and operations per principal; over budget, a connection closes with 4429. */
  readonly rateLimits: RateLimits;
  readonly logger: Logger;
  /** How often idle sockets are pinged; one that misses a pong is terminated. */
  readonly heartbeatMs?: number;
  /** Where subscription pushes are written, to leave together (the process's, shared with SSE). */
  readonly coalescer: WriteCoalescer;
  /** Where messages are kept, for the confirmation of a delivery guarantee a subscription asks for. */
  readonly delivery: Omit<DeliveryGrant, 'guarantee'>;
}

/** The attached WebSocket endpoint. */
export interface GraphQLWebSocket {
  /** Open sockets, for metrics and tests. */
  readonly connections: number;
  /** Closes every socket with 1001 (going away) and stops accepting. Safe to call twice. */
  dispose(): Promise<void>;
}

type SubscribeContext = Context<Record<string, unknown> | undefined, WebSocketExtra>;

/** Attaches graphql-ws to the HTTP server. */
export function attachGraphQLWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const { pipeline } = options;
  const log = options.logger.child({ component: 'websocket' });
  const wss = new WebSocketServer({
    server: options.httpServer,
    path: options.path,
    maxPayload: options.maxPayload,
    // Never compressed: the fan-out hub writes subscription frames straight to the connection (ws-push-sink.ts).
    perMessageDeflate: false,
    verifyClient: ({ origin, req }, done) => {
      if (originAllowed(origin, req, options.allowedOrigins)) done(true);
      else done(false, 403, 'Origin not allowed');
    },
  });
  const sessions = createWebSocketSessions(options.verifyAccessToken, log);
  const slots = createPrincipalSlots(options.maxConnectionsPerPrincipal ?? 20);
  // Each operation's request id, by its subscribe payload (what onError is handed) and its arguments.
  const requestIds = new WeakMap<object, string>();
  // Each prepared operation's socket and subscription id: where the hub pushes its results.
  const subscribers = new WeakMap<object, { readonly ctx: SubscribeContext; readonly id: string; readonly payload: SubscribePayload }>();
  // Every error leaves through the pipeline's error edge (masked if unexpected, logged once, without
  // internal extensions), whether execution produced it or graphql-ws raised it (a stream that fails).
  const forClient = (errors: readonly GraphQLError[], requestId: string = randomUUID()) => clientErrors(errors, requestId, pipeline.lifecycle.formatError);

  const serverCleanup = serveGraphQLOverWebSocket<Record<string, unknown> | undefined>(
    {
      sendHighWaterMark: options.maxBufferedBytes,
      coalescer: options.coalescer,
      ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
      connectionInitWaitTimeout: 10_000,
      onConnect: async (ctx) => {
        const socket = ctx.extra.socket;
        let principal: Principal;
        try {
          const token = tokenFrom(ctx.connectionParams);
          forgetToken(ctx.connectionParams);
          principal = await options.verifyAccessToken(token);
        } catch (error) {
          if (isServiceError(error) && error.code === 'UNAUTHENTICATED') {
            closeSocket(socket, tokenRefused(error));
          } else {
            // Anything else is ours, not the client's: say only that verification is unavailable.
            if (!(isServiceError(error) && error.code === 'AUTH_UNAVAILABLE')) log.error({ err: error }, 'token verification failed unexpectedly');
            closeSocket(socket, new ServiceError('AUTH_UNAVAILABLE', 'Unavailable: tokens cannot be verified right now'));
          }
          return false;
        }
        const admitted = await options.rateLimits.consume('wsConnect', principalKey(principal));
        if (!admitted.allowed) {
          closeSocket(socket, new ServiceError('RATE_LIMITED', `Too many connections: try again in ${retryAfterSeconds(admitted)} s`));
          return false;
        }
        if (!slots.take(principal, socket)) {
          closeSocket(socket, new ServiceError('RATE_LIMITED', `Too many connections: at most ${options.maxConnectionsPerPrincipal ?? 20} open at once`));
          return false;
        }
        // The token's lifetime bounds the connection's, until a renewal moves it.
        sessions.start(socket, principal);
        return true;
      },
      // A renewal's answer; the transport sends it as the pong.
      pong: (extra, payload) => sessions.ping(extra.socket, payload),
      onSubscribe: async (ctx, id, payload) => {
        // The operation's request id, from its first step: its errors, wherever they arise, carry it.
        const requestId = randomUUID();
        requestIds.set(payload, requestId);
        try {
          const prepared = await prepare(options, sessions, ctx, payload);
          if (Array.isArray(prepared)) return prepared;
          requestIds.set(prepared, requestId);
          subscribers.set(prepared, { ctx, id, payload });
          return prepared;
        } catch (error) {
          // A refusal thrown as a GraphQL error, or anything unexpected (a failing dependency, a bug,
          // masked in onError): this operation ends with it. Thrown on, graphql-ws would close the
          // socket and every other operation on it.
          return [asGraphQLError(error)];
        }
      },
      // graphql-ws hands back the very arguments `onSubscribe` returned.
      execute: (args) => endOnFailure(() => withRequestId(requestIds.get(args)!, () => pipeline.lifecycle.execute(args as PreparedOperation)), failedStream),
      // Subscriptions are prepared by the pipeline like any operation, and then pushed by the hub:
      // executed once per event for all the subscribers of the same operation, over WebSocket and
      // SSE alike, each frame written straight to its socket.
      subscribe: (args) =>
        endOnFailure(async () => {
          const { ctx, id } = subscribers.get(args)!;
          const sink = createWebSocketPushSink({
            socket: ctx.extra.socket,
            frames: ctx.extra.frames,
            id,
            highWaterMark: options.maxBufferedBytes,
            overMark: () => serverCleanup.watchDrain(ctx.extra.socket),
            withClientErrors: (result) => ({ ...result, errors: forClient(result.errors ?? [], requestIds.get(args)) }),
          });
          const subscription = await pipeline.hub.subscribe(args, sink, grantOf(args, subscribers.get(args)?.payload.extensions, options.delivery));
          if (!('ended' in subscription)) return subscription;
          subscription.start();
          // graphql-ws waits on an iterator for the operation's end: the hub's results leave through the sink.
          return untilEnded(subscription);
        }, failedStream),
      onNext: (_ctx, _id, _payload, args, result) => {
        if (result.errors === undefined || result.errors.length === 0) return undefined;
        return { ...result, errors: forClient(result.errors, requestIds.get(args)) };
      },
      onError: (_ctx, _id, payload, errors) => forClient(errors, requestIds.get(payload)),
    },
    wss,
    log,
  );

  // Dead peers are pinged out, a slice of the sockets at a time (ws-heartbeat.ts).
  const heartbeat = startWsHeartbeat({ clients: wss.clients, intervalMs: options.heartbeatMs ?? 30_000 });
  wss.on('connection', (socket) => heartbeat.add(socket));
  wss.on('error', (error) => log.error({ err: error }, 'websocket server error'));

  let disposing: Promise<void> | undefined;
  return {
    get connections() {
      return wss.clients.size;
    },
    dispose() {
      disposing ??= (async () => {
        heartbeat.stop();
        // graphql-ws waits for every client to answer the close frame; one that stops reading
        // never does, and ws would wait 30 s for it. Those are cut after a second.
        const cut = setTimeout(() => {
          for (const socket of wss.clients) socket.terminate();
        }, 1000);
        await serverCleanup.dispose();
        clearTimeout(cut);
      })();
      return disposing;
    },
  };
}

/** Admits and prepares one operation through the pipeline: its execution arguments, or why it is refused. */
async function prepare(
  options: GraphQLWebSocketOptions,
  sessions: WebSocketSessions,
  ctx: SubscribeContext,
  payload: SubscribePayload,
): Promise<ExecutionArgs | GraphQLError[]> {
  // The latest renewal's principal: its scopes apply to operations started from now on.
  const principal = sessions.principal(ctx.extra.socket);
  if (principal === undefined) return [refusalError(new ServiceError('UNAUTHENTICATED', 'Not authenticated.'))];
  if (Date.now() >= principal.expiresAt) {
    closeSocket(ctx.extra.socket, tokenExpired());
    return [refusalError(new ServiceError('UNAUTHENTICATED', 'The access token has expired.'))];
  }
  // ctx.subscriptions already holds this operation's id.
  if (Object.keys(ctx.subscriptions).length > options.maxSubscriptionsPerConnection) {
    return [
      refusalError(
        new ServiceError('TOO_MANY_SUBSCRIPTIONS', `At most ${options.maxSubscriptionsPerConnection} operations may run at once on one connection.`),
      ),
    ];
  }
  return options.pipeline.lifecycle.prepare({ principal, transport: 'websocket', params: payload as SubscribePayload & { documentId?: unknown } });
}

/**
 * Browsers always send `Origin` on a WebSocket upgrade and cannot forge it; other clients usually
 * send none. A missing Origin is allowed (the token still has to be valid); a present one must be
 * the service's own origin or an allowed one.
 */
function originAllowed(origin: string | undefined, req: IncomingMessage, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === '') return true;
  if (allowed.includes('*') || allowed.includes(origin)) return true;
  const host = req.headers.host;
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
}

/**
 * An operation whose execution failed before it produced a result, as a stream that fails at once:
 * graphql-ws ends such a stream with an `error` message (through onError, which masks it), where a
 * rejected `execute` or `subscribe` would close the socket with 4500.
 */
function failedStream(error: unknown): AsyncIterableIterator<ExecutionResult> {
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next: () => Promise.reject(error),
    return: async () => ({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}
