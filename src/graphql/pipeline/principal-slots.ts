/**
 * How many long-lived connections (WebSockets, SSE streams) each principal holds open at once in
 * this process: a slot is taken when one opens and given back when it closes. Without it one token
 * could open connections without end, each holding buffers, subscriptions and their state.
 */
import { principalKey, type Principal } from '../../auth/principal.js';

/** Anything that says when it has closed (a WebSocket, an HTTP response). */
export interface Closable {
  on(event: 'close', listener: () => void): unknown;
}

/** The slots of one kind of connection. */
export interface PrincipalSlots {
  /** Takes a slot for `connection` of `principal` until it closes; false when the principal holds `max` already. */
  take(principal: Principal, connection: Closable): boolean;
}

/** Creates slots of at most `max` per principal (by issuer and subject). */
export function createPrincipalSlots(max: number): PrincipalSlots {
  // One entry per principal with a connection open now: bounded by the connections themselves.
  const open = new Map<string, number>();
  return {
    take(principal, connection) {
      const key = principalKey(principal);
      const count = open.get(key) ?? 0;
      if (count >= max) return false;
      open.set(key, count + 1);
      // `on`: 'close' comes once, and `once` would hold a wrapper closure for the connection's life.
      connection.on('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left === 0) open.delete(key);
        else open.set(key, left);
      });
      return true;
    },
  };
}
