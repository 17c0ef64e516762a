/**
 * The WebSocket endpoint's heartbeat: dead peers (a laptop that slept, a dropped network) never
 * send a close frame, and without pings their subscriptions would be held forever. Each socket is
 * pinged once per interval and terminated at its next turn if it did not answer the ping before.
 *
 * The pings are spread over the interval, a slice of the sockets per tick, rather than sent to
 * every socket in one turn: at 10,000 sockets one turn of pings is 10,000 writes and, a moment
 * later, 10,000 pongs read, an event-loop stall of tens of milliseconds every interval that every
 * push waiting behind it pays (bench/README.md, "The WebSocket heartbeat, spread").
 */
import type { WebSocket } from 'ws';

/** Options of {@link startWsHeartbeat}. */
export interface WsHeartbeatOptions {
  /** The endpoint's open sockets (`WebSocketServer.clients`): each one is pinged once per interval. */
  readonly clients: Set<WebSocket>;
  /** How long between two pings of one socket; one that did not answer the last ping by its next turn is terminated. */
  readonly intervalMs: number;
  /** Ticks per interval, each pinging its share of the sockets (default 30: a tick a second at the default interval of 30 s). */
  readonly slices?: number;
}

/** A started heartbeat. */
export interface WsHeartbeat {
  /** Marks a new socket alive and listens for its pongs. */
  add(socket: WebSocket): void;
  /** Stops the pings; safe to call twice. */
  stop(): void;
}

/** Starts the heartbeat of `clients`. */
export function startWsHeartbeat(options: WsHeartbeatOptions): WsHeartbeat {
  const { clients, intervalMs } = options;
  const slices = Math.max(1, Math.floor(options.slices ?? 30));
  const alive = new WeakSet<WebSocket>();
  // Where the current round over the sockets stands; a socket that opens during a round is reached
  // in it (a Set's iterator visits what is added), one that closes is not.
  let round: Iterator<WebSocket> | undefined;

  const tick = () => {
    for (let share = Math.ceil(clients.size / slices); share > 0; share--) {
      round ??= clients.values();
      const next = round.next();
      if (next.done === true) {
        // The round is over: the next starts at the next tick, one interval after this one started.
        round = undefined;
        return;
      }
      const socket = next.value;
      if (!alive.has(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  };
  const timer = setInterval(tick, Math.max(1, Math.floor(intervalMs / slices)));
  timer.unref();

  return {
    add(socket) {
      alive.add(socket);
      socket.on('pong', () => alive.add(socket));
    },
    stop: () => clearInterval(timer),
  };
}
