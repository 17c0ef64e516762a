/**
 * How an HTTP server stops: it stops listening, then in-flight requests may finish for half the
 * shutdown's time (the rest is the consumer's and the state's) before their sockets are cut.
 */
import type { Server } from 'node:http';
import type { Config } from '../config/config.js';

/** How long in-flight HTTP requests may finish at shutdown: half the shutdown's time, the rest is the consumer's and the state's. */
export function drainGraceMs(config: Config): number {
  return Math.floor(config.shutdownTimeoutMs / 2);
}

/** Stops listening, then lets in-flight requests finish for up to `graceMs` before their sockets are cut. */
export function closeHttpServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
