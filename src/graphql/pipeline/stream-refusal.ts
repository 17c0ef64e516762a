/**
 * A streamed operation refused before its HTTP response opens (graphql-sse, the multipart
 * subscription protocol; a plain HTTP operation's refusal takes its status and headers too): a GraphQL error body, through the lifecycle's error edge under the
 * request's id, with the refusal's HTTP status and headers (a scope challenge, the seconds to
 * wait when rate limited) and the status's reason phrase, in the JSON type the client asked for.
 */
import type { GraphQLError } from 'graphql';
import { STATUS_CODES } from 'node:http';
import { ServiceError } from '../../base/errors.js';
import { clientErrors, type FormatError } from './format-error.js';

/** An HTTP answer to send instead of the stream. */
export interface StreamRefusal {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Where and how the refusal is answered. */
export interface StreamRefusalOptions {
  readonly requestId: string;
  /** The content type of the body, charset included. */
  readonly contentType: string;
  readonly formatError: FormatError;
  /** The status of an error that names none (an unexpected one: 500). */
  readonly fallbackStatus?: number;
}

/** The refusal of an operation with `errors`, the first of which decides the status. */
export function streamRefusal(errors: readonly GraphQLError[], options: StreamRefusalOptions): StreamRefusal {
  const { status, headers } = refusalHead(errors, options.fallbackStatus);
  const body = JSON.stringify({ errors: clientErrors(errors, options.requestId, options.formatError) });
  return { status, statusText: STATUS_CODES[status] ?? '', headers: { 'content-type': options.contentType, ...headers }, body };
}

/**
 * The HTTP status and headers (a challenge, `Retry-After`) of a refusal with `errors`, the first
 * of which decides: its code's status, else the status it names, else `fallbackStatus` (400: a
 * document that does not parse or validate, variables that do not coerce).
 */
export function refusalHead(errors: readonly GraphQLError[], fallbackStatus = 400): { status: number; headers: Record<string, string> } {
  const error = errors[0]!;
  const original = error.originalError;
  const http = error.extensions.http as { status?: number; headers?: Map<string, string> } | undefined;
  const status = original instanceof ServiceError ? original.httpStatus : (http?.status ?? fallbackStatus);
  const headers: Record<string, string> = Object.fromEntries(http?.headers ?? []);
  const retryAfter = error.extensions.retryAfterSeconds;
  if (typeof retryAfter === 'number') headers['retry-after'] = String(retryAfter);
  return { status, headers };
}
