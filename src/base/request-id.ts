/**
 * The request id: one per HTTP request (a well-formed incoming `X-Request-Id`, else a new UUID)
 * and one per GraphQL operation over WebSocket or SSE. An unexpected error is logged with it and the
 * client is given it, so a report from a client leads to the one log line that explains it.
 * It travels in an AsyncLocalStorage, because the places that mask and log errors (the
 * pipeline's error edge, Apollo Server's `formatError`) are called without the request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

const storage = new AsyncLocalStorage<string>();

// Printable, no spaces or quotes, bounded: an id a proxy or a client chose, safe in logs and headers.
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The incoming id when it is well formed, else a new UUID. */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED.test(header) ? header : randomUUID();
}

/** Runs `fn` (and everything it awaits) with `requestId` as the current request id. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore();
}
