/**
 * What the two streaming bindings (graphql-ws and graphql-sse) share around an operation besides
 * its preparation: ending an operation that fails before its first result, and timers that end a
 * stream at its token's expiry.
 */

/** The longest delay `setTimeout` takes; a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The delay until `epochMs` for `setTimeout`: never negative, never past what a timer can wait. */
export function delayUntil(epochMs: number): number {
  return Math.min(Math.max(0, epochMs - Date.now()), MAX_TIMER_MS);
}

/**
 * Runs an operation's execution or subscription; one that fails before its first result (not with
 * a GraphQL error, which is a result: e.g. a subscription field that resolves to no stream) ends
 * the way the protocol ends a failed stream, as `ended(error)` says, instead of rejecting: a
 * rejection would fail the whole connection (graphql-ws closes the socket, and every other
 * operation on it, with 4500) or the whole request (graphql-sse).
 */
export async function endOnFailure<T, U>(run: () => Promise<T> | T, ended: (error: unknown) => U): Promise<T | U> {
  try {
    return await run();
  } catch (error) {
    return ended(error);
  }
}
