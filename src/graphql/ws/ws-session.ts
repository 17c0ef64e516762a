/**
 * Who an acknowledged WebSocket speaks for, until when, and how that is renewed on the open socket.
 *
 * A socket is closed with 4403 when its token's lifetime ends, so a subscription never outlives its
 * token. A long-lived client keeps its socket (and its subscriptions, with no gap and no replay) by
 * sending a fresh access token before then, in a graphql-ws `ping`:
 *
 *     { "type": "ping", "payload": { "authorization": "Bearer <new token>" } }
 *
 * The token is verified like the one of `connection_init`, and must name the same issuer, subject
 * and client: the socket may change its token, never whom it acts for. Then
 *
 * - accepted: the deadline moves to the new token's expiry; the answer is
 *   `{ "type": "pong", "payload": { "renewed": true, "expiresAt": <epoch ms> } }`. The new token's
 *   scopes apply to operations started from then on; running ones keep the access they were
 *   granted when they started (their subject, and so the tests they may see, is the same);
 * - another subject or client, or a token that fails verification: closed with 4403, as a bad token
 *   at `connection_init` is (reason `Forbidden: …`);
 * - arriving at or after the deadline: closed with 4403 `Forbidden: access token expired` (the
 *   timer may not have fired yet, but the socket is already out of time);
 * - the issuer's keys cannot be fetched right now: the socket keeps its deadline and is answered
 *   `{ "renewed": false, "reason": "Unavailable: …" }`, so the client may try again before it;
 * - before the acknowledgement: closed with 4401, like an operation sent then.
 *
 * A ping without a token is answered with a pong without payload: echoed, a client that sends
 * large pings and reads nothing (before `connection_init` too) would fill its own send buffer on
 * the server. The token is never echoed back either.
 */
import type { WebSocket } from 'ws';
import { bearerToken } from '../../auth/bearer.js';
import { InvalidTokenError } from '../../auth/auth-error.js';
import type { Principal, VerifyAccessToken } from '../../auth/principal.js';
import { isServiceError, ServiceError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { delayUntil } from '../pipeline/stream-endings.js';
import { closeSocket } from './close-socket.js';

/** The sockets' principals and deadlines. */
export interface WebSocketSessions {
  /** Starts the session of an acknowledged socket; it is closed when `principal`'s token expires. */
  start(socket: WebSocket, principal: Principal): void;
  /** The principal the socket speaks for now (the latest renewal's), or undefined before the acknowledgement. */
  principal(socket: WebSocket): Principal | undefined;
  /**
   * Answers a `ping`: renews the token when the payload carries one. Returns the `pong` payload, or
   * undefined when the socket was closed instead.
   */
  ping(socket: WebSocket, payload: Record<string, unknown> | undefined): Promise<Record<string, unknown> | undefined>;
}

/** Reason of the 4403 close at a token's deadline. */
export const TOKEN_EXPIRED_REASON = 'Forbidden: access token expired';

/** Why a socket is closed at its token's deadline. */
export const tokenExpired = () => new ServiceError('UNAUTHENTICATED', TOKEN_EXPIRED_REASON);

/** Why a socket is closed when a token it presents is refused (at `connection_init` or in a renewal). */
export const tokenRefused = (error: ServiceError) => new ServiceError('UNAUTHENTICATED', `Forbidden: ${error.message}`);

/** Creates the sessions of one WebSocket server. */
export function createWebSocketSessions(verifyAccessToken: VerifyAccessToken, logger: Logger): WebSocketSessions {
  const sessions = new WeakMap<WebSocket, { principal: Principal; expiry: NodeJS.Timeout }>();

  const setDeadline = (socket: WebSocket, principal: Principal) => {
    clearTimeout(sessions.get(socket)?.expiry);
    const expiry = setTimeout(() => closeSocket(socket, tokenExpired()), delayUntil(principal.expiresAt));
    expiry.unref();
    sessions.set(socket, { principal, expiry });
  };

  const renew = async (socket: WebSocket, params: Record<string, unknown>) => {
    const session = sessions.get(socket);
    if (session === undefined) {
      closeSocket(socket, new ServiceError('NOT_ACKNOWLEDGED', 'Unauthorized: renew the token after connection_ack'));
      return undefined;
    }
    let renewed: Principal;
    try {
      renewed = await verifyAccessToken(tokenFrom(params));
    } catch (error) {
      if (isServiceError(error) && error.code === 'UNAUTHENTICATED') {
        closeSocket(socket, tokenRefused(error));
        return undefined;
      }
      if (!(isServiceError(error) && error.code === 'AUTH_UNAVAILABLE')) logger.error({ err: error }, 'token verification failed unexpectedly');
      return { renewed: false, reason: 'Unavailable: tokens cannot be verified right now' };
    }
    // Checked after verification too: it may have taken a while.
    if (Date.now() >= session.principal.expiresAt || sessions.get(socket) === undefined) {
      closeSocket(socket, tokenExpired());
      return undefined;
    }
    const { principal } = session;
    if (renewed.issuer !== principal.issuer || renewed.subject !== principal.subject || renewed.clientId !== principal.clientId) {
      closeSocket(socket, new ServiceError('FORBIDDEN', 'Forbidden: the renewed token is for another subject or client'));
      return undefined;
    }
    setDeadline(socket, renewed);
    return { renewed: true, expiresAt: renewed.expiresAt };
  };

  return {
    start(socket, principal) {
      setDeadline(socket, principal);
      // `on`: 'close' comes once, and `once` would hold a wrapper closure for the socket's life.
      socket.on('close', () => {
        clearTimeout(sessions.get(socket)?.expiry);
        sessions.delete(socket);
      });
    },
    principal: (socket) => sessions.get(socket)?.principal,
    async ping(socket, payload) {
      if (payload === undefined || !carriesToken(payload)) return undefined;
      return renew(socket, payload);
    },
  };
}

/** The bearer token of a `connection_init` or renewal payload: `{ authorization: "Bearer …" }` or `{ token: "…" }`. */
export function tokenFrom(params: Record<string, unknown> | undefined): string {
  const authorization = params?.authorization ?? params?.Authorization;
  if (typeof authorization === 'string') return bearerToken(authorization);
  if (typeof params?.token === 'string' && params.token !== '') return params.token;
  throw new InvalidTokenError('no bearer token (connection_init payload { authorization: "Bearer <token>" })');
}

/**
 * Drops the token's text from a `connection_init` payload once it is read: graphql-ws keeps the
 * payload (its `connectionParams`) for the socket's life, where nothing reads the token again, and
 * a token is the largest thing a client sends (1–2 KB from most issuers). Its fields stay, undefined.
 */
export function forgetToken(params: Record<string, unknown> | undefined): void {
  if (params === undefined) return;
  for (const field of TOKEN_FIELDS) if (Object.hasOwn(params, field)) params[field] = undefined;
}

const TOKEN_FIELDS = ['authorization', 'Authorization', 'token'] as const;

const carriesToken = (payload: Record<string, unknown>) => 'authorization' in payload || 'Authorization' in payload || 'token' in payload;
