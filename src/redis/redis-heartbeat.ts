/**
 * `startHeartbeat`: a PING every so often on a connection that otherwise sends nothing (a
 * subscriber, once subscribed). A connection that went silent (the network stopped carrying
 * packets and sent no reset) gives no sign on its own: nothing is asked, so nothing times out, and
 * notices just stop. A PING is asked, so the connection's socket timeout (redis-from-config.ts)
 * finds it silent and ioredis opens another, on which it subscribes again.
 */
import type { Redis } from 'ioredis';

/** How often an idle connection is asked a PING: with the socket timeout, a silent one is replaced within about the sum of both. */
export const HEARTBEAT_MS = 5000;

/**
 * PINGs `client` every `everyMs` while it is ready, until it ends for good (`quit`, `disconnect`).
 * A PING that fails is left to the connection's own handling (its error is logged where the
 * connection's errors are); the timer holds no process open.
 */
export function startHeartbeat(client: Redis, everyMs: number = HEARTBEAT_MS): void {
  const timer = setInterval(() => {
    if (client.status === 'ready') client.ping().catch(() => undefined);
  }, everyMs);
  timer.unref();
  client.once('end', () => clearInterval(timer));
}
