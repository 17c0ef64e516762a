/**
 * A graphql-ws subscription's sink for the fan-out hub (`../fanout/`): each shared result leaves as
 * the `next` frame graphql-ws would write for it, byte for byte (`{"id":…,"type":"next","payload":…}`),
 * built around the result's bytes, which every subscriber of the operation shares: the frame of one
 * subscriber differs from another's only in its `id`, which is spliced in. The frame is held with
 * the socket's other frames of the turn (`held-frames.ts`) and written straight to the connection
 * in one buffer, with the WebSocket framing `ws` would give it: the server never compresses
 * (`perMessageDeflate` is off), so there is nothing of `ws`'s own in between, and frames `ws` sends
 * itself (graphql-ws's other messages, pings) are written to the same connection, in order. Why not
 * `ws`'s `send`: it takes one whole message (the shared bytes copied into it first) and writes header
 * and body apart; measured with bench/frame-writers.ts (bench/README.md, "Hand-built WebSocket
 * frames against `ws`'s `send`" and "Frames of a socket written as one buffer").
 *
 * A result with errors is formatted for this subscriber (its request id, masking) and serialized on
 * its own, as graphql-ws would through `onNext`.
 */
import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';
import { stringifyWithText } from '../../domain/json-text.js';
import { withDeliveryNote } from '../fanout/delivery-notes.js';
import type { PushSink, SharedResult } from '../fanout/push-sink.js';
import type { HeldFrames } from './held-frames.js';

/** Options of {@link createWebSocketPushSink}. */
export interface WebSocketPushSinkOptions {
  readonly socket: WebSocket;
  /** The frames held for the socket's connection (shared by its subscriptions). */
  readonly frames: HeldFrames;
  /** The subscription's id, as the client chose it. */
  readonly id: string;
  /** Bytes waiting to be sent past which the subscriber takes no more until the connection drains. */
  readonly highWaterMark: number;
  /** Told when the socket goes over its mark (the transport cuts a client that stays there). */
  readonly overMark: () => void;
  /** A result with errors as this subscriber gets it (through the lifecycle's error edge, under its request id), to serialize. */
  readonly withClientErrors: (result: ExecutionResult) => object;
}

/** Creates the sink of one subscription. */
export function createWebSocketPushSink(options: WebSocketPushSinkOptions): PushSink {
  return new WebSocketPushSink(options);
}

/**
 * {@link createWebSocketPushSink}'s sink: one object per subscription, its methods shared (a sink is
 * held for as long as its subscription lasts: bench/README.md, "Idle memory"). Its options are
 * copied onto it rather than kept as an object: every push reads them, and at 10,000 subscribers
 * each object a push walks through is one more read from memory (bench/README.md, "The push path
 * measured in process").
 */
class WebSocketPushSink implements PushSink {
  private readonly prefix: Buffer;
  private readonly socket: WebSocket;
  private readonly frames: HeldFrames;
  private readonly highWaterMark: number;
  private readonly overMark: () => void;
  private readonly withClientErrors: (result: ExecutionResult) => object;

  constructor(options: WebSocketPushSinkOptions) {
    this.prefix = Buffer.from(`{"id":${JSON.stringify(options.id)},"type":"next","payload":`);
    this.socket = options.socket;
    this.frames = options.frames;
    this.highWaterMark = options.highWaterMark;
    this.overMark = options.overMark;
    this.withClientErrors = options.withClientErrors;
  }

  write(shared: SharedResult, note?: Record<string, unknown>): boolean {
    const socket = this.socket;
    // Closing: graphql-ws ends the subscription (it returns what it waits on, which leaves the hub) as the socket closes.
    if (socket.readyState !== socket.OPEN) return true;
    const errors = shared.result.errors;
    const payload = errors === undefined || errors.length === 0 ? shared.bytes() : Buffer.from(stringifyWithText(this.withClientErrors(shared.result)));
    const frames = this.frames;
    frames.text(this.prefix, note === undefined ? payload : withDeliveryNote(payload, note));
    if (socket.bufferedAmount + frames.bytes < this.highWaterMark) return true;
    this.overMark();
    return false;
  }

  whenWritable(resume: () => void): void {
    const { socket, frames, highWaterMark } = this;
    const wire = frames.wire;
    // The frames held so far go to the (corked) connection now, so that its buffer and its drain
    // account for them as they did when every frame was written there at once.
    frames.release();
    // Once under the mark again (what is held counts); a socket that closes meanwhile never resumes (its subscriptions end).
    const check = () => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount + frames.bytes < highWaterMark) resume();
      else if (wire.writableNeedDrain) wire.once('drain', check);
      else setTimeout(check, 10).unref();
    };
    check();
  }
}
