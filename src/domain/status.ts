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
