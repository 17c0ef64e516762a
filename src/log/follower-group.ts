/**
 * A group of a followed test (followed-tests.ts): its live followers that share a key (the hub's:
 * one operation and its variables) and skip the same messages. Each stored message is prepared
 * once for all of them (the lead's target's `prepare`) and written to every member in one
 * synchronous loop: per member, a comparison of places and a write.
 */
import { isFinished } from '../domain/status.js';
import type { TestMessageEvent } from '../domain/types.js';
import type { TestFollower } from './follower-types.js';

/** What a group belongs to: its test's groups by name. */
export interface GroupHolder {
  groups: Map<string, Group> | undefined;
}

/** The live members of one test that share a key and skip the same messages. */
export interface Group {
  /** The followed test it is a group of. */
  readonly test: GroupHolder;
  readonly name: string;
  /**
   * The member whose target prepares each message and whose skipping is read (every member's is the
   * same): the one that opened the group, then, once it leaves, one still there or the next to join.
   */
  lead: TestFollower;
  /** The lead left while no member was in the group: the next to join leads. */
  leadLeft: boolean;
  /**
   * Members; the place of the last message each was given is its `groupPlace` (a field, not a
   * map's value: one write a push, where a map's was a lookup).
   */
  readonly members: Set<TestFollower>;
  /** A message still being prepared (one that reads the store): later ones wait for it, in order. */
  behind: Promise<void> | undefined;
  /** Followers of the group, in it or catching up to join it again: it goes when the last one leaves. */
  holders: number;
}

/** `leaving` no longer leads: one still in the group does, or, with none there, the next to join. */
export function passLead(group: Group, leaving: TestFollower): void {
  if (group.lead !== leaving) return;
  const next = firstOf(group.members.values());
  // None in the group now (all catching up): the first to join again leads; until then nothing is delivered.
  if (next === undefined) group.leadLeft = true;
  else group.lead = next;
}

/** Ends the members of a group that are still in it (followed-tests.ts). */
export type EndMembers = (group: Group, members: readonly TestFollower[], error?: unknown) => void;

/** Which members a message is for (undefined: all): a message a failover lost and that was stored again is for those that lack it. */
export type For = ((member: TestFollower) => boolean) | undefined;

/** Writes one prepared message to every member that has not had it; a member whose target is full goes back to its follower. */
function writeAll(group: Group, prepared: unknown, arrival: number, finishing: boolean, only: For): void {
  for (const member of group.members) {
    if (arrival <= member.groupPlace || (only !== undefined && !only(member))) continue;
    member.groupPlace = arrival;
    if (member.sharing.take(prepared)) continue;
    group.members.delete(member);
    member.filled(arrival, finishing);
  }
}

/** One stored message of the group's test: prepared once, written to every member, and the end after the finishing one. */
export function deliver(group: Group, event: TestMessageEvent, endMembers: EndMembers, only: For): void {
  const { message, arrival } = event;
  const finishing = isFinished(event.status);
  // Every member skips the same messages (their skip key is the group's), so the lead tells.
  if (!group.lead.skips(message)) {
    const prepared = group.lead.sharing.prepare(message, group.members.size);
    if (prepared instanceof Promise || group.behind !== undefined)
      inTurn(group, async () => {
        try {
          writeAll(group, await prepared, arrival, finishing, only);
        } catch (error) {
          // Not prepared: the members it was for are failed with why, and out of the group.
          endMembers(group, [...group.members], error);
        }
      });
    else writeAll(group, prepared, arrival, finishing, only);
  } else {
    for (const member of group.members) if (arrival > member.groupPlace) member.groupPlace = arrival;
  }
  if (!finishing) return;
  // Those given the finishing message end once it is out (a member full with it ends on its own, once it can take more).
  const given = [...group.members];
  after(group, () => endMembers(group, given));
}

/**
 * Brings the place of every member now in the group down to `to`: after a failover shortened the
 * test's list, what comes is numbered from its new end, and a member must not pass over a new
 * message for an old number (a message it had, stored again, is kept from it by the loss it was
 * lost in). In turn with what the group is still writing, whose places count the old numbers.
 */
export function rewind(group: Group, to: number): void {
  const present = [...group.members];
  const lower = () => {
    for (const member of present) if (group.members.has(member) && member.groupPlace > to) member.groupPlace = to;
  };
  if (group.behind === undefined) lower();
  else inTurn(group, lower);
}

/** Runs `step` after what the group is still writing, and holds later writes behind it. */
function inTurn(group: Group, step: () => void | Promise<void>): void {
  const current: Promise<void> = (group.behind ?? Promise.resolve()).then(step).finally(() => {
    if (group.behind === current) group.behind = undefined;
  });
  group.behind = current;
}

/** Runs `then` once what the group is writing is out: at once when nothing is. */
export function after(group: Group, then: () => void): void {
  if (group.behind === undefined) then();
  else void group.behind.then(then);
}

/** The first of `values`, if any. */
function firstOf<T>(values: IterableIterator<T>): T | undefined {
  for (const value of values) return value;
  return undefined;
}
