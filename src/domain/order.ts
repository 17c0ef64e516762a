/** The order of a test's messages: by `sequence` where given, else by arrival. */
import type { TestMessage } from './types.js';

/**
 * Inserts `message` (the latest to arrive) where it belongs in `messages`, which are already in
 * order: a sequenced message goes after the last message whose sequence is not greater, never
 * before an unsequenced one; an unsequenced message goes to the end.
 */
export function insertOrdered<M extends Pick<TestMessage, 'sequence'>>(messages: M[], message: M): void {
  const seq = message.sequence;
  let index = messages.length;
  if (seq !== null) {
    while (index > 0) {
      const before = (messages[index - 1] as M).sequence;
      if (before === null || before <= seq) break;
      index -= 1;
    }
  }
  if (index === messages.length) messages.push(message);
  else messages.splice(index, 0, message);
}

/** The messages of a test in their order, from the same messages in the order they arrived. */
export function orderArrivals<M extends Pick<TestMessage, 'sequence'>>(arrivals: readonly M[]): M[] {
  const ordered: M[] = [];
  for (const message of arrivals) insertOrdered(ordered, message);
  return ordered;
}
