/**
 * The seam between the fan-out hub (`fanout-hub.ts`) and the streaming transports: a subscriber's
 * pushes leave through its sink, which the transport makes (a graphql-ws `next` frame on a
 * WebSocket, an SSE `next` event on a response). The hub hands every sink of one operation the same
 * {@link SharedResult} for an event: executed once, serialized once, its bytes made once.
 */
import type { ExecutionResult } from 'graphql';

/** One event's result for one operation, shared by every subscriber of that operation. */
export interface SharedResult {
  /** The source event the result was executed from (a stored message, a change). */
  readonly event: unknown;
  readonly result: ExecutionResult;
  /** The result as UTF-8 JSON, made on first use and shared (for a result without errors: with errors it is formatted per subscriber). */
  bytes(): Buffer;
  /** A value made from this result once and shared by every sink that asks with the same `key` (an SSE event's text). */
  shared<T>(key: symbol, make: () => T): T;
}

/** Where one subscription's pushes go: the transport's writer of its frames or events. */
export interface PushSink {
  /**
   * Writes one result, synchronously; false when the subscriber can take no more for now (its
   * socket or response is over its mark). `note`: what the subscriber is told with this push, for
   * its `extensions.delivery` (`delivery-notes.ts`).
   */
  write(shared: SharedResult, note?: Record<string, unknown>): boolean;
  /** Calls `resume` once the subscriber can take more again, after a write answered false. */
  whenWritable(resume: () => void): void;
}

/**
 * One subscriber's sink as the hub and its test's group in the log write to it (`delivery-notes.ts`' `notingSink`
 * around the transport's {@link PushSink}). `behind`: the push is part of a catch-up from the store,
 * with that many messages still to come (the subscriber is told).
 */
export interface SubscriberSink {
  write(shared: SharedResult, behind?: number): boolean;
  whenWritable(resume: () => void): void;
}
