/**
 * What the followers of a log's followed tests (followed-tests.ts) know of the Redis failovers that
 * lost messages of their tests after they were delivered (rare: a replica promoted without the last
 * writes). Every follower that listens is told (`tellRealigned`), and keeps the keys of the lost
 * messages it had; a message of such a loss, stored again by the consumer, goes only to the
 * followers that lack it, by those keys. One that comes after the loss has none of them: its
 * snapshot decides what it has.
 */
import { rewind, type Group } from './follower-group.js';
import { MAX_LOST_KEYS, type Realignment, type TestFollower } from './follower-types.js';
import { dropOldest } from '../base/drop-oldest.js';
import { listOf, type OneOrSet } from '../base/one-or-set.js';

/** The followers of one followed test: on their own, and in groups. */
interface TestFollowers {
  readonly solo: OneOrSet<TestFollower>;
  readonly groups: ReadonlyMap<string, Group> | undefined;
}

/**
 * A failover lost writes of `test`: every follower that listens keeps the lost messages it had
 * (`TestFollower.realigned`), and the groups' places, which count the old numbers, come down to
 * where the list now ends.
 */
export function tellRealigned(test: TestFollowers, realignment: Realignment): void {
  for (const follower of listOf(test.solo)) follower.realigned(realignment);
  for (const group of test.groups?.values() ?? []) {
    for (const member of group.members) member.realigned(realignment, member.groupPlace);
    rewind(group, realignment.kept);
  }
}

/**
 * `had` (made when needed) with the keys of the messages `realignment` says were lost that a
 * follower at `place` had been given.
 */
export function withLostHad(had: Set<string> | undefined, { lostKeys, lostAfter }: Realignment, place: number): Set<string> | undefined {
  return withHadKeys(had, lostKeys.slice(0, Math.max(0, place - lostAfter)));
}

/** `had` (made when needed) with `keys`, the oldest let go past what one realignment names. */
export function withHadKeys(had: Set<string> | undefined, keys: readonly string[]): Set<string> | undefined {
  if (keys.length === 0) return had;
  const kept = had ?? new Set<string>();
  for (const key of keys) kept.add(key);
  dropOldest(kept, MAX_LOST_KEYS);
  return kept;
}
