/**
 * One attempt at a stream: a connection, one subscription on it, and how it ended, the same for
 * both transports. `follow` opens one after another; each transport's file opens one.
 */
import type { FollowedMessage } from './types.js';

/** An error as the service formats it. */
export interface ServiceErrorShape {
  readonly message: string;
  readonly extensions?: { readonly code?: unknown; readonly retryAfterSeconds?: unknown; readonly [key: string]: unknown };
}

/** One push: a message, with what the service says about the delivery in its `extensions`. */
export interface Pushed {
  readonly message: FollowedMessage;
  readonly delivery: Readonly<Record<string, unknown>> | undefined;
}

/** How an attempt ended, once. */
export type AttemptEnd =
  /** The server completed the stream (after the final message). */
  | { readonly kind: 'complete' }
  /** The operation ended with errors (refused, or ended by the server with a reason). */
  | { readonly kind: 'errors'; readonly errors: readonly ServiceErrorShape[] }
  /** A WebSocket closed with this code and reason. */
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string }
  /** An SSE request answered with this status before any event (errors from its body when it had them). */
  | { readonly kind: 'refused'; readonly status: number; readonly errors: readonly ServiceErrorShape[]; readonly retryAfterSeconds: number | undefined }
  /** The connection failed or broke. */
  | { readonly kind: 'network'; readonly message: string }
  /** Nothing came for the dead-stream bound: the connection was cut by the library. */
  | { readonly kind: 'dead'; readonly afterMs: number };

/** What an attempt reports to. */
export interface AttemptSink {
  push(pushed: Pushed): void;
  end(end: AttemptEnd): void;
}

/** What an attempt is asked to do. */
export interface AttemptRequest {
  readonly url: string;
  readonly token: string;
  readonly query: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly deadAfterMs: number;
  readonly webSocketImpl?: unknown;
  readonly fetch?: typeof fetch;
}

/** An attempt in progress. */
export interface Attempt {
  /** Closes its connection; no more is reported. */
  close(): void;
}

/** Opens an attempt over one transport. */
export type OpenAttempt = (request: AttemptRequest, sink: AttemptSink) => Attempt;

/** The message and delivery note of one result, or the errors it carries instead. */
export function readResult(result: {
  readonly data?: unknown;
  readonly errors?: readonly ServiceErrorShape[];
  readonly extensions?: unknown;
}): Pushed | readonly ServiceErrorShape[] {
  const message = (result.data as { testMessages?: FollowedMessage } | null | undefined)?.testMessages;
  if (message === undefined || message === null) return result.errors ?? [{ message: 'a push without a message', extensions: { code: 'BAD_RESPONSE' } }];
  const delivery = (result.extensions as { delivery?: Record<string, unknown> } | undefined)?.delivery;
  return { message, delivery };
}
