/**
 * A graphql-sse stream's framing of the fan-out hub's pushes (`../fanout/response-push-sink.ts`
 * does the rest): each result leaves as the `next` event graphql-sse would print for it (distinct
 * connections mode: the result is the data), named by its message's cursor (`id:`), so a client
 * that reconnects with `Last-Event-ID` resumes after it.
 */
import type { TestMessage } from '../../domain/types.js';
import type { SharedResult } from '../fanout/push-sink.js';
import type { ResponseFraming } from '../fanout/response-push-sink.js';
import { encodeCursor } from '../schema/pagination.js';

/** The SSE `next` event of a result, with the message's cursor as its id. */
export const SSE_FRAMING: ResponseFraming = {
  key: Symbol('the SSE next event'),
  frame(shared: SharedResult, data: string): string {
    const id = isTestMessage(shared.event) ? `id: ${encodeCursor(shared.event)}\n` : '';
    return `${id}event: next\ndata: ${data}\n\n`;
  },
};

/** A message of the result log: the source events of `testMessages`, named by their cursors. */
export function isTestMessage(event: unknown): event is TestMessage {
  return (
    typeof event === 'object' && event !== null && typeof (event as TestMessage).key === 'string' && typeof (event as TestMessage).correlationId === 'string'
  );
}
