/** The REST representation of tests and messages (times as ISO 8601 strings). */
import { afterIdPrefix } from '../domain/correlation-id.js';
import { jsonField } from '../domain/json-text.js';
import { messageGlobalId, type TestMessage, type TestSummary } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import { checkPageSize, DEFAULT_MESSAGE_PAGE } from '../log/message-slice.js';
import type { MessageRange, MessageSlice } from '../log/result-log.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** One message as REST returns it: the GraphQL `TestMessage`'s fields, in its order, but `cursor` and `delivery`. */
export function messageToJson(message: TestMessage) {
  return {
    id: messageGlobalId(message),
    correlationId: message.correlationId,
    messageId: message.messageId,
    sequence: message.sequence,
    status: message.status,
    final: message.final,
    // The stored text where the store keeps one, copied into the body by the route (`stringifyWithText`).
    payload: jsonField(message, 'payload'),
    producedAt: iso(message.producedAt),
    receivedAt: iso(message.receivedAt),
  };
}

/**
 * The page of messages `GET /tests/{id}?first=&after=` asks for: `first` from 0 to 1000 (100 when
 * absent, as GraphQL's `messages`), `after` the `id` of a message of this test (the last one of the
 * previous page, as the `next` link names it). BAD_USER_INPUT otherwise, before anything is read.
 */
export function messageQuery(query: Record<string, unknown>, correlationId: string): MessageRange {
  const { first, after } = query;
  let size = DEFAULT_MESSAGE_PAGE;
  if (first !== undefined) size = typeof first === 'string' && /^\d{1,7}$/.test(first) ? Number(first) : NaN;
  checkPageSize(size);
  if (after === undefined) return { first: size };
  // The test's id in either case of a UUID, as everywhere else.
  const afterKey = typeof after === 'string' ? afterIdPrefix(after, correlationId) : undefined;
  if (afterKey === undefined || afterKey === '') {
    throw new ServiceError('BAD_USER_INPUT', 'after is not the id of a message of this test', { details: { argument: 'after' } });
  }
  return { first: size, afterKey };
}

/**
 * A test with one page of its messages, as `GET /tests/{id}` returns it: `links.next` is the page
 * that follows, when messages follow this one.
 */
export function testToJson(test: TestSummary, page: MessageSlice, range: MessageRange) {
  const self = `/tests/${encodeURIComponent(test.correlationId)}`;
  const last = page.messages.at(-1);
  const next = page.hasNextPage && last !== undefined ? `${self}?first=${range.first}&after=${encodeURIComponent(messageGlobalId(last))}` : undefined;
  return {
    correlationId: test.correlationId,
    status: test.status,
    input: test.input,
    createdAt: iso(test.createdAt),
    updatedAt: iso(test.updatedAt),
    messageCount: page.totalCount,
    messages: page.messages.map(messageToJson),
    links: next === undefined ? { self } : { self, next },
  };
}
