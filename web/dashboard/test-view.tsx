/** Small pieces the list and the detail share: a test's name and its status badge. */

/** The name the test was started with, when it had one. */
export function testName(input: unknown): string | null {
  const name = input !== null && typeof input === 'object' ? (input as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name !== '' ? name : null;
}

/** The status as a coloured badge. */
export function StatusBadge(props: { status: string; testId?: string }) {
  return (
    <span className={`rcs-status rcs-status-${props.status.toLowerCase()}`} data-testid={props.testId}>
      {props.status}
    </span>
  );
}

/** "1 message", "3 messages". */
export const messageCountText = (count: number) => `${count} message${count === 1 ? '' : 's'}`;
