/**
 * The sink of a subscription streamed over one HTTP response (an SSE event stream, a multipart
 * response), for the fan-out hub: each shared result leaves as one frame of the transport's
 * framing. A frame without errors is the same for every subscriber of the operation on that
 * framing, so it is made once per event and shared; a result with errors is formatted for this
 * subscriber, and a delivery note is this subscriber's own.
 *
 * The response's buffer is the one backpressure point: over `maxBufferedBytes` the subscriber takes
 * no more (the hub pauses it, and it catches up from the store once the response drains), and a
 * response still over it `drainTimeoutMs` later (a client that stopped reading) is cut.
 */
import type { ExecutionResult } from 'graphql';
import type { ServerResponse } from 'node:http';
import { stringifyWithText } from '../../domain/json-text.js';
import { withDeliveryNote } from './delivery-notes.js';
import type { PushSink, SharedResult } from './push-sink.js';
import type { WriteCoalescer } from './write-coalescer.js';

/** How one transport frames a result on its response. */
export interface ResponseFraming {
  /** The key its frames are shared under, one per framing. */
  readonly key: symbol;
  /** The frame of `shared`'s result, whose JSON text is `json`. */
  frame(shared: SharedResult, json: string): string;
}

/** Options of {@link createResponsePushSink}. */
export interface ResponsePushSinkOptions {
  readonly res: ServerResponse;
  readonly framing: ResponseFraming;
  readonly coalescer: WriteCoalescer;
  /** Bytes waiting to be sent past which the subscriber takes no more until the response drains. */
  readonly maxBufferedBytes: number;
  /** How long the response may stay over `maxBufferedBytes` before it is cut. */
  readonly drainTimeoutMs: number;
  /** A result with errors as this subscriber gets it (through the lifecycle's error edge, under its request id), to serialize. */
  readonly withClientErrors: (result: ExecutionResult) => object;
}

/** Creates the sink of one subscription streamed on `res`. */
export function createResponsePushSink(options: ResponsePushSinkOptions): PushSink {
  return new ResponsePushSink(options);
}

/**
 * {@link createResponsePushSink}'s sink: one object per subscription, its methods shared (a sink is
 * held for as long as its subscription lasts: bench/README.md, "Idle memory").
 */
class ResponsePushSink implements PushSink {
  /** Cuts a response still over its mark once `drainTimeoutMs` passed (a client that stopped reading). */
  private cut: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly options: ResponsePushSinkOptions) {
    // `on`: 'close' comes once, and `once` would hold a wrapper closure for the stream's life.
    options.res.on('close', () => clearTimeout(this.cut));
  }

  write(shared: SharedResult, note?: Record<string, unknown>): boolean {
    const { res, coalescer, maxBufferedBytes, framing } = this.options;
    if (res.destroyed || res.writableEnded) return true;
    const errors = shared.result.errors;
    const frame =
      errors !== undefined && errors.length > 0
        ? framing.frame(shared, stringifyWithText(this.options.withClientErrors(shared.result)))
        : note === undefined
          ? shared.shared(framing.key, () => framing.frame(shared, shared.bytes().toString()))
          : framing.frame(shared, withDeliveryNote(shared.bytes(), note).toString());
    coalescer.write(res, frame);
    if (res.writableLength <= maxBufferedBytes) return true;
    this.watchDrain();
    return false;
  }

  whenWritable(resume: () => void): void {
    const { res, maxBufferedBytes } = this.options;
    const check = () => {
      if (res.destroyed || res.writableEnded) return;
      if (res.writableLength <= maxBufferedBytes) resume();
      else if (res.writableNeedDrain) res.once('drain', check);
      else setTimeout(check, 10).unref();
    };
    check();
  }

  private watchDrain(): void {
    const { res, maxBufferedBytes, drainTimeoutMs } = this.options;
    this.cut ??= setTimeout(() => {
      this.cut = undefined;
      if (res.writableLength > maxBufferedBytes) res.destroy();
    }, drainTimeoutMs);
    this.cut.unref();
  }
}
