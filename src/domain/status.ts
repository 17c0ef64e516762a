/** How a test's status moves as its results arrive. */
import { TERMINAL_STATUSES, type TestMessage, type TestStatus } from './types.js';

/**
 * The status after `message` is stored. The first terminal status wins: a finished test stays
 * finished, and later messages are stored without reopening it.
 */
export function nextStatus(current: TestStatus, message: Pick<TestMessage, 'status' | 'final'>): TestStatus {
  if (TERMINAL_STATUSES.has(current)) return current;
  if (message.status !== null && TERMINAL_STATUSES.has(message.status)) return message.status;
  if (message.final) return 'COMPLETED';
  return 'RUNNING';
}

/** True when a test in this status will get no further status change. */
export function isFinished(status: TestStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/**
 * The status of a test that holds `count` messages, `finishedAs` being the status its first
 * finishing message set (null when none did yet). The same as folding {@link nextStatus} over its
 * messages from PENDING: a store that records only the first finishing status (set if absent) and
 * a count derives the status with this instead of reading every message.
 */
export function statusOf(finishedAs: TestStatus | null, count: number): TestStatus {
  if (finishedAs !== null) return finishedAs;
  return count > 0 ? 'RUNNING' : 'PENDING';
}

/**
 * The terminal status `message` gives a test that is not yet finished, or null when it leaves it
 * running: what a store that records the first finishing status records for it.
 */
export function finishingStatus(message: Pick<TestMessage, 'status' | 'final'>): TestStatus | null {
  const next = nextStatus('RUNNING', message);
  return isFinished(next) ? next : null;
}
