/** Cursor pagination over a test's ordered messages, and the cursors the subscription resumes from. */
import type { MessagePage, TestMessage } from '../../domain/types.js';
import { checkPageSize, MAX_MESSAGE_PAGE, notACursor, sliceMessages } from '../../log/message-slice.js';
import type { MessageRange, MessageSlice } from '../../log/result-log.js';
import { afterIdPrefix } from '../../domain/correlation-id.js';

/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = MAX_MESSAGE_PAGE;

/**
 * A cursor names a message: its test, its place in the test's order of arrival, and its key. The
 * place is what a subscription resumes after (subscriptions deliver in arrival order, so "after
 * this place" is exactly what a subscriber was not pushed, whatever the messages' sequences); the
 * key is what a page of `messages` (in the test's order) continues after, and what tells a cursor
 * of a test that has since expired and started again from one of the test as it stands. The test
 * is part of the cursor so that one from another test is refused rather than matched.
 */
export function encodeCursor(message: TestMessage): string {
  return Buffer.from(`${message.correlationId}/${message.arrival}/${message.key}`, 'utf8').toString('base64url');
}

/** What a cursor names: the message's key, and its place in arrival order (null in a cursor of the earlier form, test and key only). */
export interface DecodedCursor {
  readonly key: string;
  readonly arrival: number | null;
}

/**
 * The message `cursor` names in test `correlationId`; BAD_USER_INPUT when it is not a cursor of
 * that test (malformed, or another test's). Whether the test holds the message is the caller's
 * check. Cursors of the earlier form (`<test>/<key>`, every key starting with its kind and a colon)
 * are still read.
 */
export function decodeCursor(cursor: string, correlationId: string): DecodedCursor {
  const rest = afterIdPrefix(Buffer.from(cursor, 'base64url').toString('utf8'), correlationId);
  if (rest === undefined || rest === '') throw notACursor();
  const placed = /^(\d{1,15})\/(.+)$/s.exec(rest);
  return placed === null ? { key: rest, arrival: null } : { key: placed[2] as string, arrival: Number(placed[1]) };
}

/**
 * What the log reads for a page of test `correlationId`'s messages of at most `first` after the
 * cursor `after` (exclusive): BAD_USER_INPUT for a page size out of range or a cursor of another
 * test, before anything is read.
 */
export function messageRange(correlationId: string, first: number, after: string | null | undefined): MessageRange {
  checkPageSize(first);
  return { first, afterKey: after === null || after === undefined ? null : decodeCursor(after, correlationId).key };
}

/** A page the log read, with the cursor of each message. */
export function toMessagePage(slice: MessageSlice): MessagePage {
  return { edges: slice.messages.map((node) => ({ cursor: encodeCursor(node), node })), hasNextPage: slice.hasNextPage, totalCount: slice.totalCount };
}

/** The page of test `correlationId`'s `messages`, all in hand, after `after` (exclusive), at most `first` long. */
export function paginateMessages(correlationId: string, messages: readonly TestMessage[], first: number, after: string | null | undefined): MessagePage {
  return toMessagePage(sliceMessages(messages, messageRange(correlationId, first, after)));
}
