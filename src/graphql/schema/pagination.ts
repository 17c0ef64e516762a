/** Cursor pagination over a test's ordered messages, and the cursors the subscription resumes from. */
import type { MessagePage, TestMessage } from '../../domain/types.js';
import { messageGlobalId } from '../../domain/types.js';
import { ServiceError } from '../../errors.js';

/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = 1000;

/**
 * Cursors name a message (its test and key), not a position: messages that arrive out of order
 * are inserted earlier in the list, and a positional cursor would then skip or repeat. The test is
 * part of the cursor so that one from another test is refused rather than matched by key.
 */
export function encodeCursor(message: TestMessage): string {
  return Buffer.from(messageGlobalId(message), 'utf8').toString('base64url');
}

/**
 * The key of the message `cursor` names in test `correlationId`; BAD_USER_INPUT when it is not a
 * cursor of that test (malformed, or another test's). Whether the test holds the key is the
 * caller's check.
 */
export function cursorKey(cursor: string, correlationId: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${correlationId}/`;
  if (!decoded.startsWith(prefix) || decoded.length === prefix.length) throw notACursor();
  return decoded.slice(prefix.length);
}

const notACursor = () => new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this test', { details: { argument: 'after' } });

/** The page of test `correlationId`'s `messages` after `after` (exclusive), at most `first` long. */
export function paginateMessages(correlationId: string, messages: readonly TestMessage[], first: number, after: string | null | undefined): MessagePage {
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw new ServiceError('BAD_USER_INPUT', `first must be between 0 and ${MAX_PAGE_SIZE}`, { details: { argument: 'first' } });
  }
  let start = 0;
  if (after !== null && after !== undefined) {
    const key = cursorKey(after, correlationId);
    const index = messages.findIndex((m) => m.key === key);
    if (index < 0) throw notACursor();
    start = index + 1;
  }
  const slice = messages.slice(start, start + first);
  return {
    edges: slice.map((node) => ({ cursor: encodeCursor(node), node })),
    hasNextPage: start + first < messages.length,
    totalCount: messages.length,
  };
}
