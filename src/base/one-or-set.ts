/**
 * None, one, or a set of two or more: how a table holds what is usually one (a followed test's
 * one follower, a test's one listener) without a set for each. A set, once made, is kept while it
 * holds one or more: one emptied goes, so a holder never keeps an empty set.
 */

/** Nothing, one value, or a set of them. */
export type OneOrSet<T extends object> = T | Set<T> | undefined;

/** `held` with `value` added: the value alone, the same set grown, or a new set of both. */
export function withOne<T extends object>(held: OneOrSet<T>, value: T): OneOrSet<T> {
  if (held === undefined || held === value) return value;
  if (held instanceof Set) return held.add(value);
  return new Set([held, value]);
}

/** Whether `held` holds `value`. */
export function holds<T extends object>(held: OneOrSet<T>, value: T): boolean {
  return held === value || (held instanceof Set && held.has(value));
}

/** `held` without `value`: undefined once nothing is left (an emptied set goes too). */
export function withoutOne<T extends object>(held: OneOrSet<T>, value: T): OneOrSet<T> {
  if (held === value) return undefined;
  if (!(held instanceof Set)) return held;
  // A set being iterated meanwhile simply finds nothing more.
  held.delete(value);
  return held.size === 0 ? undefined : held;
}

/** What `held` holds, as a list of its own (safe to go through while `held` changes). */
export function listOf<T extends object>(held: OneOrSet<T>): T[] {
  return held instanceof Set ? [...held] : held === undefined ? [] : [held];
}
