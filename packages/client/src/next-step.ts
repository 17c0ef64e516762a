/**
 * What to do when an attempt ends: the service says why a stream ended in a stable code (an error's
 * `extensions.code`, a WebSocket close code, an HTTP status), and the library resumes on what a
 * resume can cure (a lost connection, a replica going away, a token that expired, a spent budget, a
 * server's fault) and stops for good on what it cannot (a cursor the store no longer holds, a test
 * that is not there or not the caller's, a request the service refuses as it is).
 */
import type { AttemptEnd, ServiceErrorShape } from './attempt.js';
import type { ServiceErrorCode } from './service-error-codes.js';

/** Resume (after renewing the token, or waiting at least `waitMs`), or stop with a code. */
export type NextStep =
  | { readonly resume: true; readonly renewToken: boolean; readonly waitMs?: number; readonly reason: string }
  | { readonly resume: false; readonly code: string; readonly message: string };

/** Error codes a resume can cure; any other code ends the follow. Typed by the service's union (generated), so a code it no longer sends fails the build. */
const RESUMABLE: ReadonlySet<string> = new Set<ServiceErrorCode>([
  'SHUTTING_DOWN',
  'STORE_UNAVAILABLE',
  'BROKER_UNAVAILABLE',
  'AUTH_UNAVAILABLE',
  'INTERNAL_SERVER_ERROR',
  'SUBSCRIBER_TOO_SLOW',
  'NOT_ACKNOWLEDGED',
]);
const RATE_LIMITS: ReadonlySet<string> = new Set<ServiceErrorCode>(['RATE_LIMITED', 'TOO_MANY_SUBSCRIPTIONS']);

/**
 * WebSocket close codes that end the follow: the request as sent will never be served (graphql-ws's
 * 4400 for a bad request, which the service also uses for refusals of the operation; 4406 for a
 * subprotocol it does not speak). Every other close is worth a resume: 1001 and 1006 (a replica
 * gone), 1008 (this client read too slowly), 4403 (the token: renewed first), 4429 (wait), 4500.
 */
const FINAL_CLOSES = new Set([4400, 4406]);

/** HTTP statuses of an SSE request that end the follow (the body's code, when there is one, is reported). */
const FINAL_STATUSES = new Map<number, ServiceErrorCode>([
  [400, 'BAD_REQUEST'],
  [403, 'FORBIDDEN'],
  [404, 'NOT_FOUND'],
  [405, 'BAD_REQUEST'],
  [406, 'BAD_REQUEST'],
  [410, 'CURSOR_EXPIRED'],
  [413, 'PAYLOAD_TOO_LARGE'],
  [415, 'BAD_REQUEST'],
]);

/** The next step after `end`. */
export function nextStep(end: AttemptEnd): NextStep {
  switch (end.kind) {
    case 'complete':
      return { resume: false, code: 'COMPLETED', message: 'the stream completed' };
    case 'errors':
      return fromErrors(end.errors, undefined);
    case 'closed':
      if (FINAL_CLOSES.has(end.code))
        return { resume: false, code: 'BAD_REQUEST' satisfies ServiceErrorCode, message: `the connection was closed: ${end.code} ${end.reason}` };
      return { resume: true, renewToken: end.code === 4403, ...(end.code === 4429 ? { waitMs: 1000 } : {}), reason: `closed ${end.code} ${end.reason}`.trim() };
    case 'refused':
      return fromRefusal(end.status, end.errors, end.retryAfterSeconds);
    case 'network':
      return { resume: true, renewToken: false, reason: end.message };
    case 'dead':
      return { resume: true, renewToken: false, reason: `nothing received for ${end.afterMs} ms` };
  }
}

function fromRefusal(status: number, errors: readonly ServiceErrorShape[], retryAfterSeconds: number | undefined): NextStep {
  if (errors.length > 0) return fromErrors(errors, retryAfterSeconds);
  if (status === 401) return { resume: true, renewToken: true, reason: 'refused: 401' };
  if (status === 429) return { resume: true, renewToken: false, waitMs: (retryAfterSeconds ?? 1) * 1000, reason: 'refused: 429' };
  const code = FINAL_STATUSES.get(status);
  if (code !== undefined) return { resume: false, code, message: `the service answered ${status}` };
  return { resume: true, renewToken: false, reason: `refused: ${status}` };
}

function fromErrors(errors: readonly ServiceErrorShape[], retryAfterSeconds: number | undefined): NextStep {
  const first = errors[0];
  const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : 'UNKNOWN';
  const message = first?.message ?? 'the stream ended with an error';
  if (code === ('UNAUTHENTICATED' satisfies ServiceErrorCode)) return { resume: true, renewToken: true, reason: `${code}: ${message}` };
  if (RATE_LIMITS.has(code)) {
    const seconds = typeof first?.extensions?.retryAfterSeconds === 'number' ? first.extensions.retryAfterSeconds : (retryAfterSeconds ?? 1);
    return { resume: true, renewToken: false, waitMs: seconds * 1000, reason: `${code}: ${message}` };
  }
  if (RESUMABLE.has(code)) return { resume: true, renewToken: false, reason: `${code}: ${message}` };
  return { resume: false, code, message };
}
