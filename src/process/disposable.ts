/**
 * The one stop contract of every long-lived part (servers, sockets, consumers, connections).
 * Stopping is idempotent: a second call waits for the first instead of stopping twice.
 */

/** Something long-lived that can be stopped. */
export interface Disposable {
  /** Stops the part and releases what it holds. Safe to call twice (the second call waits for the first). */
  dispose(): Promise<void>;
}

/** Wraps a stop function so that every call after the first returns the first call's promise. */
export function disposeOnce(stop: () => Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => (stopping ??= stop());
}
