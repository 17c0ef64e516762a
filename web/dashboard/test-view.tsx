/** Small pieces the list and the detail share: a test's name and its status badge. */

/** The name the test was started with, when it had one. */
export function testName(input: unknown): string | null {
  const name = input !== null && typeof input === 'object' ? (input as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name !== '' ? name : null;
}

/** The statuses that have a colour of their own (schema/schema.graphql's TestStatus). */
const COLOURED = new Set(['pending', 'running', 'completed', 'failed']);

/**
 * The class that colours `status` (`rcs-status-running`, …), or the plain badge's for a status
 * with no colour of its own (one a newer schema adds), so a class name is never made of unknown text.
 */
export function statusClass(status: string): string {
  const known = status.toLowerCase();
  return COLOURED.has(known) ? `rcs-status rcs-status-${known}` : 'rcs-status';
}

/** The status as a coloured badge. The word stays: colour is never the only sign of the status. */
export function StatusBadge(props: { status: string; testId?: string }) {
  return (
    <span className={statusClass(props.status)} data-testid={props.testId}>
      {props.status}
    </span>
  );
}

/** "1 message", "3 messages". */
export const messageCountText = (count: number) => `${count} message${count === 1 ? '' : 's'}`;
