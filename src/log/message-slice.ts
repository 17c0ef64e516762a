/**
 * A page of a test's messages cut from all of them in their order: what the memory log answers,
 * and what the Redis log answers for a list it has to read whole and order first.
 */
import type { TestMessage } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import type { MessageRange, MessageSlice } from './result-log.js';

/** Largest page of messages a client may ask for, on every path (GraphQL `messages(first:)`, `GET /tests/{id}?first=`). */
export const MAX_MESSAGE_PAGE = 1000;

/** The page of messages a client gets when it does not say (the SDL's default of `messages(first:)` too). */
export const DEFAULT_MESSAGE_PAGE = 100;

/** BAD_USER_INPUT unless `first` is a page size a client may ask for. */
export function checkPageSize(first: number): void {
  if (!Number.isInteger(first) || first < 0 || first > MAX_MESSAGE_PAGE) {
    throw new ServiceError('BAD_USER_INPUT', `first must be between 0 and ${MAX_MESSAGE_PAGE}`, { details: { argument: 'first' } });
  }
}

/** The refusal of a cursor that is not one of this test (malformed, or another test's). */
export function notACursor(): ServiceError {
  return new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this test', { details: { argument: 'after' } });
}

/** The refusal of a cursor of this test whose message the test no longer holds (see CURSOR_EXPIRED). */
export function cursorExpired(): ServiceError {
  return new ServiceError(
    'CURSOR_EXPIRED',
    'The message this cursor names is no longer stored (the test expired, was evicted or was started again): start over.',
    {
      details: { argument: 'after' },
    },
  );
}

/** The page `range` asks for of `messages`, which are in the test's order. */
export function sliceMessages(messages: readonly TestMessage[], range: MessageRange): MessageSlice {
  let start = 0;
  if (range.afterKey !== null && range.afterKey !== undefined) {
    const key = range.afterKey;
    const index = messages.findIndex((m) => m.key === key);
    if (index < 0) throw cursorExpired();
    start = index + 1;
  }
  return { messages: messages.slice(start, start + range.first), hasNextPage: start + range.first < messages.length, totalCount: messages.length };
}
