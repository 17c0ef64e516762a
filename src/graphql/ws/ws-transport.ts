/**
 * Binds graphql-ws's protocol server (`makeServer`) to a `ws` WebSocketServer. It replaces
 * graphql-ws's own `useServer` binding for one reason: writes. That binding waits for every frame
 * to be flushed before the operation may send its next one, and writes each frame with its own
 * system call; when one message fans out to thousands of subscribers, those calls are most of the
 * server's work. Here
 *
 * - the frames written to one socket during one turn of the event loop leave in a single write,
 *   with the hub's pushes to it: the process's write coalescer (`fanout/write-coalescer.ts`) holds
 *   the socket from its first frame, the one scheme of held writes a socket has, and
 * - `send` returns at once while the socket's outgoing buffer is below `sendHighWaterMark`, and
 *   waits for the flush only above it, so a client that reads slowly still slows its own
 *   subscriptions down (and its stream's queue limit applies) instead of filling server memory; a
 *   socket still above it `drainTimeoutMs` after it went there (a client that stopped reading) is
 *   closed with 1008 and, if even the close cannot leave, terminated.
 *
 * Subscription results do not pass here: the fan-out hub writes them straight to the connection
 * (`ws-push-sink.ts`), held for the turn as the socket's frames (`held-frames.ts`, created here one
 * a socket), in the same writes as this transport's own frames, which flush them first to keep the
 * order.
 *
 * Liveness pings are the caller's (ws-server has its own heartbeat), so there are none here. The
 * caller may also choose what a client's graphql-ws `ping` is answered with (`pong`): ws-server
 * renews tokens through pings, and must not echo a token back as graphql-ws would.
 */
import { handleProtocols, makeServer, MessageType, stringifyMessage, type ServerOptions } from 'graphql-ws';
import type { Socket } from 'node:net';
import type { WebSocket, WebSocketServer } from 'ws';
import { ServiceError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import type { WriteCoalescer } from '../fanout/write-coalescer.js';
import { closeSocket } from './close-socket.js';
import { createHeldFrames, type HeldFrames } from './held-frames.js';

/**
 * What the protocol server's hooks find in `ctx.extra`: the socket and the frames held for the TCP
 * connection `ws` writes to. Not the upgrade request, which graphql-ws's own binding hands on: kept for
 * the socket's lifetime, it held about 1.2 KB of heap a socket (the request, its headers, the
 * bearer token's text) that nothing reads once the socket is open.
 */
export interface WebSocketExtra {
  readonly socket: WebSocket;
  /** The hub's frames held for the socket's connection. */
  readonly frames: HeldFrames;
}

/** The bound protocol server. */
export interface WebSocketTransport {
  /** Closes every socket with 1001 (going away) and stops the WebSocket server. */
  dispose(): Promise<void>;
  /** The socket went over its high-water mark outside `send` (the hub's pushes): cut it if it stays there past the drain timeout. */
  watchDrain(socket: WebSocket): void;
}

/** What the transport adds to graphql-ws's server options. */
export interface TransportOptions {
  readonly sendHighWaterMark?: number;
  /** How long a socket may stay above `sendHighWaterMark` before it is cut (default 30 s). */
  readonly drainTimeoutMs?: number;
  /** Holds a socket's writes for the turn's one write (the process's write coalescer, shared with the hub's pushes). */
  readonly coalescer: Pick<WriteCoalescer, 'hold' | 'gather'>;
  /**
   * The payload of the `pong` answering a client's `ping`, after graphql-ws's `onPing` (undefined: a
   * pong without one; no pong once the socket has closed). By default the ping's own, as graphql-ws does.
   */
  readonly pong?: (extra: WebSocketExtra, payload: Record<string, unknown> | undefined) => Promise<Record<string, unknown> | undefined>;
}

/** Binds `options` to `wss`. */
export function serveGraphQLOverWebSocket<P extends Record<string, unknown> | undefined>(
  options: ServerOptions<P, WebSocketExtra> & TransportOptions,
  wss: WebSocketServer,
  logger: Logger,
): WebSocketTransport {
  const server = makeServer<P, WebSocketExtra>(options);
  const highWaterMark = options.sendHighWaterMark ?? 64 * 1024;
  const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
  wss.options.handleProtocols = handleProtocols;

  const drainWatches = new WeakMap<WebSocket, () => void>();
  wss.on('connection', (socket, request) => {
    // Listeners with `on`, not `once`: a socket emits 'close' once, and `once` wraps each listener in
    // a closure of its own, held for the socket's life (five of them made about 0.9 KB a socket). An
    // 'error' that came twice would find no listener left under `once`, and crash the process.
    socket.on('error', (error) => {
      logger.warn({ err: error }, 'WebSocket error');
      closeSocket(socket, internalError());
    });

    // The upgraded request's socket is the one ws writes frames to.
    const wire: Socket = request.socket;
    const frames = createHeldFrames(socket, wire, options.coalescer);
    // Armed when the buffer goes over the mark; cuts the socket if it is still over when it fires.
    let drainCheck: NodeJS.Timeout | undefined;
    const watchDrain = () => {
      drainCheck ??= setTimeout(() => {
        drainCheck = undefined;
        if (socket.readyState !== socket.OPEN || socket.bufferedAmount < highWaterMark) return;
        logger.warn({ bufferedBytes: socket.bufferedAmount, drainTimeoutMs }, 'closing a WebSocket whose client stopped reading');
        closeSocket(socket, new ServiceError('SUBSCRIBER_TOO_SLOW', SLOW_CLIENT_REASON));
        // A client that reads nothing reads no close frame either.
        setTimeout(() => socket.terminate(), 1000).unref();
      }, drainTimeoutMs);
      drainCheck.unref();
    };
    drainWatches.set(socket, watchDrain);
    const send = (data: string): Promise<void> | undefined => {
      if (socket.readyState !== socket.OPEN) return undefined;
      // Every frame of this turn (and the hub's pushes to this socket) joins one write, after the
      // hub's frames held before it.
      frames.release();
      if (socket.bufferedAmount < highWaterMark) {
        // A failed write closes the socket, and the close ends its operations.
        socket.send(data, ignore);
        return undefined;
      }
      watchDrain();
      return new Promise((resolve, reject) => socket.send(data, (error) => (error ? reject(error) : resolve())));
    };

    const extra: WebSocketExtra = { socket, frames };
    const answerPing = options.pong;
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send,
        ...(answerPing === undefined
          ? {}
          : {
              onPing: async (payload: Record<string, unknown> | undefined) => {
                const answer = await answerPing(extra, payload);
                if (socket.readyState !== socket.OPEN) return;
                await send(stringifyMessage(answer === undefined ? { type: MessageType.Pong } : { type: MessageType.Pong, payload: answer }));
              },
            }),
        close: (code, reason) => {
          frames.flush();
          socket.close(code, reason);
        },
        onMessage: (handle) =>
          // Not an async listener: graphql-ws's handling of a `subscribe` lasts as long as the
          // operation, and an async listener waiting on it would hold the message's buffer (a view
          // of the read it arrived in) for all that time.
          socket.on('message', (data) => {
            handle(String(data)).catch((error: unknown) => {
              logger.error({ err: error }, 'WebSocket message handling failed');
              closeSocket(socket, internalError());
            });
          }),
      },
      extra,
    );
    socket.on('close', (code, reason) => {
      clearTimeout(drainCheck);
      void closed(code, String(reason));
    });
  });

  return {
    watchDrain: (socket) => drainWatches.get(socket)?.(),
    async dispose() {
      for (const client of wss.clients) closeSocket(client, new ServiceError('SHUTTING_DOWN', 'Going away'));
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function ignore(): void {}

const internalError = () => new ServiceError('INTERNAL_SERVER_ERROR', 'Internal server error');

/**
 * The reason of the close (1008, policy violation) of a socket whose client stopped reading: the
 * client may reconnect and resume, and should read what it asks for.
 */
export const SLOW_CLIENT_REASON = 'Too slow: the client did not read its messages';
