/**
 * Bounding a set or a map that keeps what came last: its oldest entries go first, in the order a
 * Set or Map keeps, that of insertion.
 */

/** Deletes the oldest entries of `kept` until it holds `max` at most. */
export function dropOldest(kept: Set<unknown> | Map<unknown, unknown>, max: number): void {
  for (const key of kept.keys()) {
    if (kept.size <= max) return;
    kept.delete(key);
  }
}
