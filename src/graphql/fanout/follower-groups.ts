/**
 * The hub's groups: the live subscribers of one operation on one test. A subscriber's follower
 * replays the test and catches up on its own; once it is live it hands its live messages over to
 * the group (`Follower.handOff`), and from then on the group's one listener of the test takes each
 * stored message, executes and serializes it once (`shared-results.ts`) and writes it to every
 * member's sink in one synchronous loop: per member, a comparison and a write, nothing else.
 *
 * A member whose sink is full leaves the group and rejoins its follower at the place it had
 * reached (`Follower.rejoin`): the follower catches up from the store once the sink drains and
 * hands over again when it is live, so a slow member holds nothing and misses nothing. Each member
 * keeps the place of the last message it was given, and is only given later ones: a hand-over in
 * the middle of a message's delivery neither skips nor repeats it.
 */
import type { ExecutionArgs } from 'graphql';
import { isFinished } from '../../domain/status.js';
import type { TestMessageEvent } from '../../domain/types.js';
import type { Follower } from '../../log/follower-types.js';
import type { SharedResult, SubscriberSink } from './push-sink.js';
import type { SharedResults } from './shared-results.js';

/** One subscriber, as its group knows it. */
export interface GroupMember {
  readonly follower: Follower;
  readonly args: ExecutionArgs;
  /** The operation's key (`SharedResults.keyOf`). */
  readonly key: string;
  readonly sink: SubscriberSink;
  /** The test finished: its last message was written. */
  readonly end: () => void;
  /** Delivering failed (the operation's execution threw). */
  readonly fail: (error: unknown) => void;
}

/** The groups of one hub. */
export interface FollowerGroups {
  /** A member's follower is live: its group takes its live messages over (at once, or once the group listens). */
  live(member: GroupMember): void;
  /** The member left (its subscription ended): it is no longer written to. */
  leave(member: GroupMember): void;
}

interface Group {
  readonly name: string;
  /** The first member's: every member's execution is the same (same document and variables). */
  readonly args: ExecutionArgs;
  readonly key: string;
  readonly skips: (message: TestMessageEvent['message']) => boolean;
  /** Members and the place of the last message each was given. */
  readonly members: Map<GroupMember, number>;
  /** Live members waiting for the group's listener to be in place. */
  readonly waiting: Set<GroupMember>;
  unlisten: (() => void) | undefined;
  /** A result still being executed (a selection that reads the store): later ones wait for it, in order. */
  behind: Promise<void> | undefined;
  /** Subscribers of the group, in it or catching up to rejoin it: the group goes when the last one leaves. */
  holders: number;
}

/** Creates the groups over the hub's shared results. */
export function createFollowerGroups(results: SharedResults, onError: (error: unknown) => void): FollowerGroups {
  const groups = new Map<string, Group>();
  const groupOf = new Map<GroupMember, Group>();

  const join = (group: Group, member: GroupMember) => {
    const passed = member.follower.handOff();
    if (passed !== undefined) group.members.set(member, passed);
  };

  /** Writes one result to every member that has not had it; a member whose sink is full goes back to its follower. */
  const writeAll = (group: Group, shared: SharedResult, arrival: number) => {
    for (const [member, last] of group.members) {
      if (arrival <= last) continue;
      group.members.set(member, arrival);
      if (member.sink.write(shared)) continue;
      group.members.delete(member);
      member.follower.rejoin(arrival);
      member.sink.whenWritable(() => member.follower.resume());
    }
  };

  const deliver = (group: Group, event: TestMessageEvent) => {
    const { message, arrival } = event;
    if (!group.skips(message)) {
      const shared = results.get(message, group.args, group.key, group.members.size);
      if (shared instanceof Promise || group.behind !== undefined) {
        const previous = group.behind ?? Promise.resolve();
        const current: Promise<void> = previous
          .then(async () => writeAll(group, await shared, arrival))
          .catch((error: unknown) => {
            for (const member of group.members.keys()) member.fail(error);
          })
          .finally(() => {
            if (group.behind === current) group.behind = undefined;
          });
        group.behind = current;
      } else writeAll(group, shared, arrival);
    } else {
      for (const [member, last] of group.members) if (arrival > last) group.members.set(member, arrival);
    }
    if (!isFinished(event.status)) return;
    const ended = [...group.members.keys()];
    const done = () => {
      for (const member of ended) member.end();
    };
    if (group.behind === undefined) done();
    else void group.behind.then(done);
  };

  /**
   * The test left the store: its members are failed with `error` once what is being written is out;
   * the group goes at once (a member that joins later opens a new one), its members catching up
   * find the test gone themselves.
   */
  const gone = (group: Group, error: unknown) => {
    if (groups.get(group.name) === group) groups.delete(group.name);
    group.unlisten = undefined;
    const told = [...group.members.keys()];
    group.members.clear();
    const fail = () => {
      for (const member of told) member.fail(error);
    };
    if (group.behind === undefined) fail();
    else void group.behind.then(fail);
  };

  const open = (member: GroupMember): Group => {
    const name = `${member.follower.correlationId}\u0000${member.key}`;
    const known = groups.get(name);
    if (known !== undefined) return known;
    const first = member.follower;
    const created: Group = {
      name,
      args: member.args,
      key: member.key,
      // Every member of a group has the same arguments, so the first one's `afterSequence` is theirs.
      skips: (message) => first.skips(message),
      members: new Map(),
      waiting: new Set(),
      unlisten: undefined,
      behind: undefined,
      holders: 0,
    };
    groups.set(name, created);
    member.follower
      .listen(
        (event) => {
          if (created.members.size > 0) deliver(created, event);
        },
        {
          // It follows the test for each member in it (a member catching up listens for itself, or not at all while paused).
          weight: () => created.members.size,
          gone: (error) => gone(created, error),
        },
      )
      .then(
        (unlisten) => {
          // Everyone left meanwhile: nothing to listen for.
          if (groups.get(name) !== created) return unlisten();
          created.unlisten = unlisten;
          for (const waiting of created.waiting) join(created, waiting);
          created.waiting.clear();
        },
        (error: unknown) => {
          // The members keep their own followers, which stay live.
          onError(error);
          if (groups.get(name) === created && created.members.size === 0) groups.delete(name);
        },
      );
    return created;
  };

  return {
    live(member) {
      let group = groupOf.get(member);
      if (group === undefined) {
        group = open(member);
        groupOf.set(member, group);
        group.holders += 1;
      }
      if (group.unlisten === undefined) group.waiting.add(member);
      else join(group, member);
    },
    leave(member) {
      const group = groupOf.get(member);
      if (group === undefined) return;
      groupOf.delete(member);
      group.members.delete(member);
      group.waiting.delete(member);
      group.holders -= 1;
      if (group.holders > 0) return;
      if (groups.get(group.name) === group) groups.delete(group.name);
      group.unlisten?.();
    },
  };
}
