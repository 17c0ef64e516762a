/**
 * The library's contract: what {@link follow} is given, what it hands the application, and what it
 * says about the stream it keeps open. Transports and cursor stores are behind these types, so an
 * application never sees graphql-ws or graphql-sse.
 */
import type { FollowTestSubscription } from './gql/graphql.js';
import type { ServiceErrorCode } from './service-error-codes.js';

/** One message of a test, as the service sends it (typed from the schema). */
export type FollowedMessage = FollowTestSubscription['testMessages'];

/**
 * Where the last delivered message's cursor is kept for each test. `follow` reads it once, when it
 * starts, and writes it after each message the application has taken; a persistent store (a page's
 * `localStorage`) makes a restart resume where the last one stopped.
 */
export interface CursorStore {
  get(correlationId: string): string | undefined | Promise<string | undefined>;
  set(correlationId: string, cursor: string): void | Promise<void>;
}

/** What the service granted the subscription, from its first push (`extensions.delivery`). */
export interface DeliveryGranted {
  readonly guarantee: string;
  /** `memory`, `replicated` or `redis`: where the service keeps messages. */
  readonly store: string;
  /** What a stored message outlives: `none`, `restarts` or `failovers`. */
  readonly durable: string;
}

/** Where a follow stands; `onState` is told each change. */
export type FollowState =
  | { readonly status: 'connecting'; readonly attempt: number }
  /** Messages flow as they arrive. */
  | { readonly status: 'live'; readonly delivery?: DeliveryGranted }
  /** The service fell behind this subscriber's reading and is catching it up from its store: `behind` messages still to come. */
  | { readonly status: 'catching-up'; readonly behind: number; readonly delivery?: DeliveryGranted }
  /** The stream was lost; the next attempt starts after `waitMs`, resuming after the last message taken. */
  | { readonly status: 'reconnecting'; readonly attempt: number; readonly waitMs: number; readonly reason: string }
  | FollowEnd;

/** Codes the library ends a follow with on its own account (the application's handler or store failed, a fault of its own, an error with no code). */
export type LibraryErrorCode = 'HANDLER_FAILED' | 'CURSOR_STORE_FAILED' | 'CLIENT_FAILED' | 'UNKNOWN';

/**
 * Why a follow failed: one of the service's codes (generated from its code union), one of the
 * library's, or a code a newer service sends that this version does not know yet (kept as sent).
 */
// `string & {}` keeps the known codes offered by editors while any string still fits.
export type FollowFailureCode = ServiceErrorCode | LibraryErrorCode | (string & {});

/** How a follow ended: for good, in every case. */
export type FollowEnd =
  /** The test's stream completed: the final message was taken (now or by an earlier follow). */
  | { readonly status: 'completed' }
  /** What cannot be resumed: `code` is the service's (`CURSOR_EXPIRED`, `TEST_EXPIRED`, `NOT_FOUND`, `FORBIDDEN`...) or the library's own (`HANDLER_FAILED`, `CURSOR_STORE_FAILED`, `UNAUTHENTICATED` after renewals that did not help or no token to be had). */
  | { readonly status: 'failed'; readonly code: FollowFailureCode; readonly message: string }
  /** The application stopped it. */
  | { readonly status: 'stopped' };

/** Options of {@link follow}. */
export interface FollowOptions {
  /** The service's base URL (`https://results.example.com`); the transport's path (`/graphql`) is added. */
  readonly url: string;
  readonly transport: 'ws' | 'sse';
  /** The access token for each connection: called again on every reconnect, so a renewed token is used. */
  readonly getToken: () => string | Promise<string>;
  /**
   * Takes one message; the next one waits for it to return (or for its promise). A message is
   * taken once: its cursor is stored after this returns, and the stream resumes after it. A throw
   * ends the follow (`HANDLER_FAILED`) with the message not taken.
   */
  readonly onMessage: (message: FollowedMessage) => void | Promise<void>;
  readonly onState?: (state: FollowState) => void;
  /** Default: a memory store of its own (resumes within this follow only). */
  readonly cursorStore?: CursorStore;
  /** The delivery guarantee asked for (default `at-least-once`); the service confirms it on the first push. */
  readonly deliveryGuarantee?: 'at-least-once' | 'at-most-once';
  /**
   * A stream that brings nothing for this long (no message, no keep-alive) is taken for dead and
   * reconnected. Default 30 s: the service's SSE keep-alive comes every 12 s, and over WebSocket
   * the library pings every third of it. Over SSE keep it above 12 s: below, an idle stream is
   * reconnected every `deadAfterMs` for nothing.
   */
  readonly deadAfterMs?: number;
  /** The longest wait between attempts (default 10 s); the first retry after a stream that delivered is at once. */
  readonly maxRetryWaitMs?: number;
  /** Consecutive attempts refused for the token (each after a new `getToken`) before the follow fails (default 3). */
  readonly maxAuthRetries?: number;
  /**
   * Stops the follow when aborted, as {@link Following.stop} does (the message being handed over is
   * taken first); a signal aborted already ends it `stopped` before it connects.
   */
  readonly signal?: AbortSignal;
  /** A WebSocket implementation where there is no global one (older Node): `ws`'s class. */
  readonly webSocketImpl?: unknown;
  /** A fetch where the global one will not do. */
  readonly fetch?: typeof fetch;
}

/** A follow in progress. */
export interface Following {
  /**
   * Ends the follow (its stream closed, no more messages handed over): resolves when it has and the
   * message being handed over, if any, was taken and its cursor kept. Not to be awaited inside
   * `onMessage`, which it would wait for.
   */
  stop(): Promise<void>;
  /** Resolves with how it ended. */
  readonly done: Promise<FollowEnd>;
}
