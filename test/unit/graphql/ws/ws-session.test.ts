/**
 * The WebSocket sessions' renewal rules where the verifier's answer decides (the verifier is the
 * seam, a function; the sockets are real `ws` sockets): keys unavailable keeps the deadline, and a
 * renewal read after the deadline, before its timer could fire, closes the socket as expired.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { Principal, VerifyAccessToken } from '../../../../src/auth/principal.js';
import { ServiceError } from '../../../../src/base/errors.js';
import { createWebSocketSessions, TOKEN_EXPIRED_REASON } from '../../../../src/graphql/ws/ws-session.js';
import { createSilentLogger } from '../../../../src/base/logger.js';

const principal = (expiresInMs: number, subject = 'tester'): Principal => ({
  subject,
  clientId: 'dashboard',
  scopes: new Set(['tests:read']),
  expiresAt: Date.now() + expiresInMs,
  issuer: 'https://issuer.test.invalid',
});

let server: WebSocketServer | undefined;
afterEach(() => server?.close());

/** A connected pair: the server's socket, and how the client saw it close. */
async function pair() {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server!.once('listening', resolve));
  const accepted = new Promise<WebSocket>((resolve) => server!.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => client.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
  return { socket: await accepted, closed };
}

describe('WebSocket sessions', () => {
  it('keeps the deadline when the keys cannot be fetched: answered renewed false, closed at the old deadline', async () => {
    const verify: VerifyAccessToken = () => Promise.reject(new ServiceError('AUTH_UNAVAILABLE', 'keys down'));
    const sessions = createWebSocketSessions(verify, createSilentLogger());
    const { socket, closed } = await pair();
    const started = Date.now();
    sessions.start(socket, principal(300));
    expect(await sessions.ping(socket, { authorization: 'Bearer fresh' })).toEqual({
      renewed: false,
      reason: 'Unavailable: tokens cannot be verified right now',
    });
    expect(await closed).toEqual({ code: 4403, reason: TOKEN_EXPIRED_REASON });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('closes as expired a renewal read after the deadline, even before the deadline timer ran', async () => {
    const verify: VerifyAccessToken = () => Promise.resolve(principal(60_000));
    const sessions = createWebSocketSessions(verify, createSilentLogger());
    const { socket, closed } = await pair();
    sessions.start(socket, principal(20));
    // The event loop is held past the deadline: its timer cannot have fired yet.
    const until = Date.now() + 60;
    while (Date.now() < until);
    expect(await sessions.ping(socket, { authorization: 'Bearer fresh' })).toBeUndefined();
    expect(await closed).toEqual({ code: 4403, reason: TOKEN_EXPIRED_REASON });
  });

  it('moves the deadline for the same subject and client, and answers a ping without a token with a pong that echoes nothing', async () => {
    const renewed = principal(60_000);
    const sessions = createWebSocketSessions(() => Promise.resolve(renewed), createSilentLogger());
    const { socket } = await pair();
    sessions.start(socket, principal(100));
    expect(await sessions.ping(socket, { at: 1 })).toBeUndefined();
    expect(await sessions.ping(socket, { token: 'fresh' })).toEqual({ renewed: true, expiresAt: renewed.expiresAt });
    expect(sessions.principal(socket)).toBe(renewed);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
  });
});
