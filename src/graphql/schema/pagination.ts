/** Cursor pagination over a test's ordered messages, and the cursors the subscription resumes from. */
import type { MessagePage, TestMessage } from '../../domain/types.js';
import { messageGlobalId } from '../../domain/types.js';
import { checkPageSize, MAX_MESSAGE_PAGE, notACursor, sliceMessages } from '../../log/message-slice.js';
import type { MessageRange, MessageSlice } from '../../log/result-log.js';

/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = MAX_MESSAGE_PAGE;

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

/**
 * What the log reads for a page of test `correlationId`'s messages of at most `first` after the
 * cursor `after` (exclusive): BAD_USER_INPUT for a page size out of range or a cursor of another
 * test, before anything is read.
 */
export function messageRange(correlationId: string, first: number, after: string | null | undefined): MessageRange {
  checkPageSize(first);
  return { first, afterKey: after === null || after === undefined ? null : cursorKey(after, correlationId) };
}

/** A page the log read, with the cursor of each message. */
export function toMessagePage(slice: MessageSlice): MessagePage {
  return { edges: slice.messages.map((node) => ({ cursor: encodeCursor(node), node })), hasNextPage: slice.hasNextPage, totalCount: slice.totalCount };
}

/** The page of test `correlationId`'s `messages`, all in hand, after `after` (exclusive), at most `first` long. */
export function paginateMessages(correlationId: string, messages: readonly TestMessage[], first: number, after: string | null | undefined): MessagePage {
  return toMessagePage(sliceMessages(messages, messageRange(correlationId, first, after)));
}
