/**
 * The followed tests of one log: for each test this process follows, its one listener (the
 * source's `listen`) and every follower of it, each at its place. A follower listens through it
 * while it reads its snapshot, replays or catches up: each live event is handed to it (`heard`).
 * Once it is live with a target that shares (the hub's: one operation and its variables), it joins
 * its test's group of that key and skipping (`share`, follower-group.ts), and from then on the group prepares each
 * stored message once (the targets' `prepare`: the hub executes and serializes it) and writes it
 * to every member's target in one synchronous loop: per member, a comparison and a write.
 *
 * A member whose target is full leaves the group at the place it reached and is told so
 * (`filled`): its follower holds nothing but that place, listening on its own (paused, as one on
 * its own pauses, so that a failover that numbers the list anew moves its place too: `realigned`,
 * follower-losses.ts), catches up from the store once the target asks for more, and joins again
 * when it is live, so a slow member misses nothing. Each
 * member keeps the place of the last message it was given and is only given later ones: a join in
 * the middle of a message's delivery neither skips nor repeats it.
 *
 * A group ends its members itself: after the test's finishing message, when the test leaves the
 * store, or when a message cannot be prepared, each member still in it leaves and is ended (or
 * failed) through its follower (`ended`), which then holds nothing whether or not its reader ever
 * returns it. A follower returned or thrown by its reader leaves at once (`leave`).
 *
 * Inside the log: the follower and its followed test are one owner of a subscriber's place, and
 * one listener per test per log is the only one the source has; the hub sees neither.
 */
import type { TestMessageEvent } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';
import { holds, listOf, withOne, withoutOne, type OneOrSet } from '../base/one-or-set.js';
import type { FollowedTests, FollowSource, TestFollower } from './follower-types.js';
import { after, deliver, passLead, type EndMembers, type Group } from './follower-group.js';
import { tellRealigned } from './follower-losses.js';

/** One followed test: its listener, its followers listening on their own, and its groups. */
interface FollowedTest {
  readonly correlationId: string;
  /** Resolves once the listener is in place, rejects when it could not be; undefined once it is in place. */
  listening: Promise<void> | undefined;
  unlisten: (() => void) | undefined;
  /** Followers listening on their own (not in a group): one alone, the usual case, is held without a set. */
  solo: OneOrSet<TestFollower>;
  /**
   * Groups by key and skipping; each stays while a follower holds it (in it, or catching up to join
   * it again). Made by the first to share: most followed tests are waiting for their next message.
   */
  groups: Map<string, Group> | undefined;
}

/** What `listen` answers once the test's listener is in place. */
const LISTENING: Promise<void> = Promise.resolve();

/** Creates the followed tests over `source` (the log's). */
export function createFollowedTests(source: Pick<FollowSource, 'listen'>): FollowedTests {
  const tests = new Map<string, FollowedTest>();
  const groupOf = new Map<TestFollower, Group>();
  // A message a failover lost after it was delivered, stored again, goes only to the followers that lack it.
  const lacking = (key: string) => (follower: TestFollower) => !follower.hadBefore(key);

  const open = (correlationId: string): FollowedTest => {
    const test: FollowedTest = { correlationId, listening: undefined, unlisten: undefined, solo: undefined, groups: undefined };
    tests.set(correlationId, test);
    test.listening = source
      .listen(correlationId, (event, lost) => emit(test, event, lost === true), {
        gone: (error) => gone(test, error),
        realigned: (realignment) => tellRealigned(test, realignment),
      })
      .then(
        (unlisten) => {
          test.listening = undefined;
          // Everyone left meanwhile (or the test left the store): nothing to listen for.
          if (tests.get(correlationId) === test) test.unlisten = unlisten;
          else unlisten();
        },
        (error: unknown) => {
          // Its followers are refused with why (their opening or catch-up fails); a later one tries again.
          if (tests.get(correlationId) === test) tests.delete(correlationId);
          test.solo = undefined;
          throw error;
        },
      );
    return test;
  };

  /** Stops listening once no follower listens or holds a group. */
  const dropIfIdle = (test: FollowedTest) => {
    if (test.solo !== undefined || (test.groups?.size ?? 0) > 0 || tests.get(test.correlationId) !== test) return;
    tests.delete(test.correlationId);
    test.unlisten?.();
    test.unlisten = undefined;
  };

  /** The test left the store: its solo followers are told at once, its members once what is being written is out. */
  const gone = (test: FollowedTest, error: ServiceError) => {
    if (tests.get(test.correlationId) === test) tests.delete(test.correlationId);
    // The source dropped the listener itself.
    test.unlisten = undefined;
    const solo = listOf(test.solo);
    test.solo = undefined;
    for (const follower of solo) follower.leftStore(error);
    for (const group of test.groups?.values() ?? []) {
      const told = [...group.members];
      after(group, () => endMembers(group, told, error));
    }
  };

  /** The group is over for `members` (those still in it): each leaves and is ended, or failed with `error`. */
  const endMembers: EndMembers = (group, members, error) => {
    const over = members.filter((member) => group.members.has(member));
    for (const member of over) followed.leave(member);
    for (const member of over) member.ended(error);
  };

  /** Lets go of the group `follower` holds: the group goes with its last holder, its lead passes on. */
  const release = (follower: TestFollower, group: Group) => {
    groupOf.delete(follower);
    group.members.delete(follower);
    group.holders -= 1;
    if (group.holders === 0) {
      if (group.test.groups?.get(group.name) === group) group.test.groups.delete(group.name);
      return;
    }
    passLead(group, follower);
  };

  const emit = (test: FollowedTest, event: TestMessageEvent, lost: boolean) => {
    // Solo first: one that joins its group in this loop is given the event there (its place says whether it had it).
    const { solo } = test;
    // The key only for such a message (rare): a derived key is built on each read.
    const lacks = lost ? lacking(event.message.key) : undefined;
    if (solo instanceof Set) {
      for (const follower of solo) if (lacks === undefined || lacks(follower)) follower.heard(event);
    } else if (solo !== undefined && (lacks === undefined || lacks(solo))) solo.heard(event);
    const { groups } = test;
    if (groups === undefined) return;
    for (const group of groups.values()) if (group.members.size > 0) deliver(group, event, endMembers, lacks);
  };

  const followed: FollowedTests = {
    listen(follower) {
      const test = tests.get(follower.correlationId) ?? open(follower.correlationId);
      // Listening already (paused): it goes on as it was, and so does one out of its full group.
      if (holds(test.solo, follower)) return test.listening ?? LISTENING;
      test.solo = withOne(test.solo, follower);
      return test.listening ?? LISTENING;
    },
    unlisten(follower) {
      const test = tests.get(follower.correlationId);
      groupOf.get(follower)?.members.delete(follower);
      if (test === undefined || !dropSolo(test, follower)) return;
      dropIfIdle(test);
    },
    share(follower, passed) {
      const test = tests.get(follower.correlationId);
      if (test === undefined || !holds(test.solo, follower)) return false;
      let group = groupOf.get(follower);
      // Held since before its test left the store and came back: that group is over.
      if (group !== undefined && group.test !== test) release(follower, group);
      if (group === undefined || group.test !== test) {
        const name = `${follower.skipKey}\u0000${follower.sharing.shareKey}`;
        test.groups ??= new Map();
        group = test.groups.get(name);
        if (group === undefined) {
          group = { test, name, lead: follower, leadLeft: false, members: new Set(), behind: undefined, holders: 0 };
          test.groups.set(name, group);
        }
        groupOf.set(follower, group);
        group.holders += 1;
      }
      if (group.leadLeft) {
        group.lead = follower;
        group.leadLeft = false;
      }
      dropSolo(test, follower);
      follower.groupPlace = passed;
      group.members.add(follower);
      return true;
    },
    leave(follower) {
      const group = groupOf.get(follower);
      if (group !== undefined) release(follower, group);
      const test = tests.get(follower.correlationId);
      if (test === undefined) return;
      dropSolo(test, follower);
      dropIfIdle(test);
    },
    count(correlationId) {
      if (correlationId !== undefined) {
        const test = tests.get(correlationId);
        return test === undefined ? 0 : listeningIn(test);
      }
      let total = 0;
      for (const test of tests.values()) total += listeningIn(test);
      return total;
    },
  };
  return followed;
}

/** Followers of a test that listen: on their own, or as members of a group. */
function listeningIn(test: FollowedTest): number {
  let total = 0;
  // A paused one listens only to keep its place: it is not counted until it takes messages again.
  for (const follower of listOf(test.solo)) if (!follower.isPaused()) total += 1;
  for (const group of test.groups?.values() ?? []) total += group.members.size;
  return total;
}

/** Takes `follower` out of its test's solo followers; false when it was not one. */
function dropSolo(test: FollowedTest, follower: TestFollower): boolean {
  if (!holds(test.solo, follower)) return false;
  test.solo = withoutOne(test.solo, follower);
  return true;
}
