/**
 * The order servers (or writers) run in, round by round, so that a noisy minute falls on each
 * alike: with two they alternate; with more, the rounds take each rotation of the list and then
 * each rotation of it reversed, so that over `2 × n` rounds every one runs first, last, before and
 * after each other one equally often (with three: every one of the six orders once).
 */

/** The order of `items` in round `round` (from 0). */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  const n = items.length;
  if (n < 2) return [...items];
  const rotations = n === 2 ? 2 : 2 * n;
  const k = round % rotations;
  const list = k < n ? items : [...items].reverse();
  const first = k % n;
  return [...list.slice(first), ...list.slice(0, first)];
}
