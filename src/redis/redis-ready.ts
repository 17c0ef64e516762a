/**
 * A short wait for a connection that is reconnecting. The service's connections have no offline
 * queue (redis-from-config.ts): a command sent while one reconnects (a dropped connection, a
 * Sentinel failover, a cluster refreshing its slots) fails at once. Where a caller is better served
 * by a short wait than by an error, it waits here first, for a bound of its choosing; past it the
 * command goes out anyway and fails as before. The waiters of one connection share one listener.
 */
import type { RedisClient } from './redis-client.js';

/**
 * How long a command waits for its reconnecting connection before it is sent anyway (and fails):
 * the one bound of the service's reads, appends and issuer storage. A failover of a second or less
 * is then invisible to callers; a longer one answers STORE_UNAVAILABLE.
 */
export const RECONNECT_WAIT_MS = 1000;

const pending = new WeakMap<RedisClient, Promise<void>>();

/** Settles when `client` is ready again, or closed for good. */
function readyOrEnded(client: RedisClient): Promise<void> {
  let found = pending.get(client);
  if (found !== undefined) return found;
  found = new Promise<void>((resolve) => {
    const done = () => {
      client.off('ready', done);
      client.off('end', done);
      pending.delete(client);
      resolve();
    };
    client.on('ready', done);
    client.on('end', done);
  });
  pending.set(client, found);
  return found;
}

/**
 * Resolves once `client` is ready: at once when it is, when it has not been asked to connect
 * (`wait`) or is closed for good (`end`), and after `withinMs` at the latest. Never rejects.
 */
export async function whenReady(client: RedisClient, withinMs: number): Promise<void> {
  const { status } = client;
  if (status === 'ready' || status === 'wait' || status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, withinMs);
  });
  try {
    await Promise.race([readyOrEnded(client), late]);
  } finally {
    clearTimeout(timer);
  }
}
