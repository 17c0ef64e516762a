/**
 * A graphql-sse stream's sink for the fan-out hub (`../fanout/`): each shared result leaves as the
 * `next` event graphql-sse would print for it (distinct connections mode: the result is the data),
 * named by its message's cursor (`id:`), so a client that reconnects with `Last-Event-ID` resumes
 * after it. The event's text is the same for every SSE subscriber of the operation, so it is made
 * once per event and shared; a result with errors is formatted for this subscriber.
 *
 * The response's buffer is the one backpressure point: over `maxBufferedBytes` the subscriber takes
 * no more (the hub pauses it, and it catches up from the store once the response drains), and a
 * response still over it `drainTimeoutMs` later (a client that stopped reading) is cut.
 */
import type { ExecutionResult } from 'graphql';
import type { ServerResponse } from 'node:http';
import type { TestMessage } from '../../domain/types.js';
import { withDeliveryNote } from '../fanout/delivery-notes.js';
import type { PushSink, SharedResult } from '../fanout/push-sink.js';
import type { WriteCoalescer } from '../fanout/write-coalescer.js';
import { encodeCursor } from '../schema/pagination.js';

/** Options of {@link createSsePushSink}. */
export interface SsePushSinkOptions {
  readonly res: ServerResponse;
  readonly coalescer: WriteCoalescer;
  /** Bytes waiting to be sent past which the subscriber takes no more until the response drains. */
  readonly maxBufferedBytes: number;
  /** How long the response may stay over `maxBufferedBytes` before it is cut. */
  readonly drainTimeoutMs: number;
  /** A result with errors as this subscriber gets it (through the lifecycle's error edge, under its request id), to serialize. */
  readonly withClientErrors: (result: ExecutionResult) => unknown;
}

const EVENT_TEXT = Symbol('the SSE next event');

/** Creates the sink of one SSE subscription. */
export function createSsePushSink(options: SsePushSinkOptions): PushSink {
  const { res, coalescer, maxBufferedBytes } = options;
  let cut: NodeJS.Timeout | undefined;
  const watchDrain = () => {
    cut ??= setTimeout(() => {
      cut = undefined;
      if (res.writableLength > maxBufferedBytes) res.destroy();
    }, options.drainTimeoutMs);
    cut.unref();
  };
  res.once('close', () => clearTimeout(cut));
  return {
    write(shared, note) {
      if (res.destroyed || res.writableEnded) return true;
      const errors = shared.result.errors;
      const event =
        errors !== undefined && errors.length > 0
          ? nextEvent(shared, JSON.stringify(options.withClientErrors(shared.result)))
          : note === undefined
            ? shared.shared(EVENT_TEXT, () => nextEvent(shared, shared.bytes().toString()))
            : nextEvent(shared, withDeliveryNote(shared.bytes(), note).toString());
      coalescer.write(res, event);
      if (res.writableLength <= maxBufferedBytes) return true;
      watchDrain();
      return false;
    },
    whenWritable(resume) {
      const check = () => {
        if (res.destroyed || res.writableEnded) return;
        if (res.writableLength <= maxBufferedBytes) resume();
        else if (res.writableNeedDrain) res.once('drain', check);
        else setTimeout(check, 10).unref();
      };
      check();
    },
  };
}

/** The `next` event of a result, as graphql-sse prints it, with the message's cursor as its id. */
function nextEvent(shared: SharedResult, data: string): string {
  const id = isTestMessage(shared.event) ? `id: ${encodeCursor(shared.event)}\n` : '';
  return `${id}event: next\ndata: ${data}\n\n`;
}

/** A message of the result log: the source events of `testMessages`, named by their cursors. */
export function isTestMessage(event: unknown): event is TestMessage {
  return (
    typeof event === 'object' && event !== null && typeof (event as TestMessage).key === 'string' && typeof (event as TestMessage).correlationId === 'string'
  );
}
