/** Cursor pagination over a test's ordered messages. */
import type { MessagePage, TestMessage } from '../domain/types.js';
import { ServiceError } from '../errors.js';

/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = 1000;

/**
 * Cursors name a message (by its key), not a position: messages that arrive out of order are
 * inserted earlier in the list, and a positional cursor would then skip or repeat.
 */
export function encodeCursor(message: TestMessage): string {
  return Buffer.from(message.key, 'utf8').toString('base64url');
}

/** The page of `messages` after `after` (exclusive), at most `first` long. */
export function paginateMessages(messages: readonly TestMessage[], first: number, after: string | null | undefined): MessagePage {
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw new ServiceError('BAD_USER_INPUT', `first must be between 0 and ${MAX_PAGE_SIZE}`, { details: { argument: 'first' } });
  }
  let start = 0;
  if (after !== null && after !== undefined) {
    const key = Buffer.from(after, 'base64url').toString('utf8');
    const index = messages.findIndex((m) => m.key === key);
    if (index < 0) throw new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this test', { details: { argument: 'after' } });
    start = index + 1;
  }
  const slice = messages.slice(start, start + first);
  return {
    edges: slice.map((node) => ({ cursor: encodeCursor(node), node })),
    hasNextPage: start + first < messages.length,
    totalCount: messages.length,
  };
}
