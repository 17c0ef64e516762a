/**
 * A graphql-ws subscription's sink for the fan-out hub (`../fanout/`): each shared result leaves as
 * the `next` frame graphql-ws would write for it, byte for byte (`{"id":…,"type":"next","payload":…}`),
 * built around the result's bytes, which every subscriber of the operation shares: the frame of one
 * subscriber differs from another's only in its `id`, which is spliced in. The frame is written
 * straight to the connection (through the process's write coalescer), with the WebSocket framing
 * `ws` would give it: the server never compresses (`perMessageDeflate` is off), so there is nothing
 * of `ws`'s own in between, and frames `ws` sends itself (graphql-ws's other messages, pings)
 * are written to the same connection, in order. Why not `ws`'s `send`: it takes one whole message
 * (the shared bytes copied into it first) and writes header and body apart; measured with
 * bench/frame-writers.ts, the hand-built frame costs 0.92× the CPU of `send` at one frame per socket
 * per turn and 0.68× at ten (bench/README.md, "Hand-built WebSocket frames against `ws`'s `send`").
 *
 * A result with errors is formatted for this subscriber (its request id, masking) and serialized on
 * its own, as graphql-ws would through `onNext`.
 */
import type { ExecutionResult } from 'graphql';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { stringifyWithText } from '../../domain/json-text.js';
import { withDeliveryNote } from '../fanout/delivery-notes.js';
import type { PushSink, SharedResult } from '../fanout/push-sink.js';
import type { WriteCoalescer } from '../fanout/write-coalescer.js';

/** Options of {@link createWebSocketPushSink}. */
export interface WebSocketPushSinkOptions {
  readonly socket: WebSocket;
  /** The TCP connection under the socket, which `ws` writes its frames to. */
  readonly wire: Socket;
  /** The subscription's id, as the client chose it. */
  readonly id: string;
  readonly coalescer: WriteCoalescer;
  /** Bytes waiting to be sent past which the subscriber takes no more until the connection drains. */
  readonly highWaterMark: number;
  /** Told when the socket goes over its mark (the transport cuts a client that stays there). */
  readonly overMark: () => void;
  /** A result with errors as this subscriber gets it (through the lifecycle's error edge, under its request id), to serialize. */
  readonly withClientErrors: (result: ExecutionResult) => object;
}

const SUFFIX = 0x7d; // `}`

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
  private readonly wire: Socket;
  private readonly coalescer: WriteCoalescer;
  private readonly highWaterMark: number;
  private readonly overMark: () => void;
  private readonly withClientErrors: (result: ExecutionResult) => object;

  constructor(options: WebSocketPushSinkOptions) {
    this.prefix = Buffer.from(`{"id":${JSON.stringify(options.id)},"type":"next","payload":`);
    this.socket = options.socket;
    this.wire = options.wire;
    this.coalescer = options.coalescer;
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
    this.coalescer.write(this.wire, textFrame(this.prefix, note === undefined ? payload : withDeliveryNote(payload, note)));
    if (socket.bufferedAmount < this.highWaterMark) return true;
    this.overMark();
    return false;
  }

  whenWritable(resume: () => void): void {
    const { socket, wire, highWaterMark } = this;
    // Once under the mark again; a socket that closes meanwhile never resumes (its subscriptions end).
    const check = () => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount < highWaterMark) resume();
      else if (wire.writableNeedDrain) wire.once('drain', check);
      else setTimeout(check, 10).unref();
    };
    check();
  }
}

/**
 * One unmasked, unfragmented WebSocket text frame (RFC 6455 section 5.2, as a server sends it)
 * holding `prefix`, `payload` and a closing brace.
 */
export function textFrame(prefix: Buffer, payload: Buffer): Buffer {
  const length = prefix.length + payload.length + 1;
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81; // FIN, text
  if (length < 126) frame[1] = length;
  else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  // `set`, not `Buffer.copy`: the same copy without `copy`'s argument checks, once per push.
  frame.set(prefix, header);
  frame.set(payload, header + prefix.length);
  frame[frame.length - 1] = SUFFIX;
  return frame;
}
