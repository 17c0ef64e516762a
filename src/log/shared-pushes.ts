/**
 * The shared pushes of one log: the live pushed followers of one test whose targets share a key
 * (the hub's: one operation and its variables) and skip the same messages are written by one pass.
 * A follower replays the test and catches up on its own; once it is live it joins its pass
 * (`SharedMember.handOff`), and from then on the pass's one listener of the test prepares each
 * stored message once (its targets' `prepare`: the hub executes and serializes it) and writes it to
 * every member's target in one synchronous loop: per member, a comparison and a write, nothing else.
 *
 * A member whose target is full leaves the pass and goes back to its follower at the place it had
 * reached (`SharedMember.rejoin`): the follower catches up from the store once the target asks for
 * more and joins again when it is live, so a slow member holds nothing and misses nothing. Each
 * member keeps the place of the last message it was given and is only given later ones: a join in
 * the middle of a message's delivery neither skips nor repeats it.
 *
 * The pass ends its members itself: after the test's finishing message, when the test leaves the
 * store, or when a message cannot be prepared, each member still in it leaves and is ended (or
 * failed) through its follower (`SharedMember.ended`), which then holds nothing whether or not its
 * reader ever returns it. A follower returned or thrown by its reader leaves its pass at once.
 *
 * Inside the log: the follower and its pass are one owner of a subscriber's place, the hub sees
 * neither (it gives a sharing target and gets its messages).
 */
import { isFinished } from '../domain/status.js';
import type { TestMessageEvent } from '../domain/types.js';
import type { FollowSource, SharedMember, SharedPushes } from './follower-types.js';

/** One pass: the members of one test, key and skipping, and its one listener. */
interface Pass {
  readonly name: string;
  /**
   * The member whose target prepares each message and whose skipping is read (every member's is the
   * same): the one that opened the pass, then, once it leaves, one still there or the next to join.
   */
  lead: SharedMember;
  /** The lead left while no member was in the pass: the next to join leads. */
  leadLeft: boolean;
  /** Members and the place of the last message each was given. */
  readonly members: Map<SharedMember, number>;
  /** Live members waiting for the pass's listener to be in place. */
  readonly waiting: Set<SharedMember>;
  unlisten: (() => void) | undefined;
  /** A message still being prepared (one that reads the store): later ones wait for it, in order. */
  behind: Promise<void> | undefined;
  /** Followers of the pass, in it or catching up to join it again: the pass goes when the last one leaves. */
  holders: number;
}

/** Creates the shared pushes over `source` (the log's); `onError` gets a pass's failure to listen (its members then go on listening on their own). */
export function createSharedPushes(source: Pick<FollowSource, 'listen'>, onError: (error: unknown) => void = () => undefined): SharedPushes {
  const passes = new Map<string, Pass>();
  const passOf = new Map<SharedMember, Pass>();

  const join = (pass: Pass, member: SharedMember) => {
    const passed = member.handOff();
    if (passed !== undefined) pass.members.set(member, passed);
  };

  const open = (member: SharedMember): Pass => {
    // Joined, not concatenated: one string rather than a tree of pieces, held as long as the pass.
    const name = [member.correlationId, member.skipKey, member.sharing.shareKey].join('\u0000');
    const known = passes.get(name);
    if (known !== undefined) return known;
    const created: Pass = { name, lead: member, leadLeft: false, members: new Map(), waiting: new Set(), unlisten: undefined, behind: undefined, holders: 0 };
    passes.set(name, created);
    source
      .listen(
        member.correlationId,
        (event) => {
          if (created.members.size > 0) deliver(created, event, endMembers);
        },
        {
          // It follows the test for each member in it (a member catching up listens for itself, or not at all while paused).
          weight: () => created.members.size,
          gone: (error) => gone(passes, created, error, endMembers),
        },
      )
      .then(
        (unlisten) => {
          // Everyone left meanwhile: nothing to listen for.
          if (passes.get(name) !== created) return unlisten();
          created.unlisten = unlisten;
          for (const waiting of created.waiting) join(created, waiting);
          created.waiting.clear();
        },
        (error: unknown) => {
          // The members waiting keep listening on their own: they were never handed off.
          onError(error);
          if (passes.get(name) === created && created.members.size === 0) passes.delete(name);
        },
      );
    return created;
  };

  /**
   * The pass is over for `members` (those of them still in it): each leaves it and is ended, or
   * failed with `error`; the pass goes with its last holder.
   */
  const endMembers: EndMembers = (pass, members, error) => {
    // A member in a pass is that pass's in `passOf` too (join and leave change both).
    const over = members.filter((member) => pass.members.has(member));
    for (const member of over) shared.leave(member);
    for (const member of over) member.ended(error);
  };

  const shared: SharedPushes = {
    join(member) {
      let pass = passOf.get(member);
      if (pass === undefined) {
        pass = open(member);
        passOf.set(member, pass);
        pass.holders += 1;
      }
      if (pass.leadLeft) {
        pass.lead = member;
        pass.leadLeft = false;
      }
      if (pass.unlisten === undefined) pass.waiting.add(member);
      else join(pass, member);
    },
    leave(member) {
      const pass = passOf.get(member);
      if (pass === undefined) return;
      passOf.delete(member);
      pass.members.delete(member);
      pass.waiting.delete(member);
      pass.holders -= 1;
      if (pass.holders > 0) {
        if (pass.lead === member) {
          const next = firstOf(pass.members.keys()) ?? firstOf(pass.waiting.values());
          // None in the pass now (all catching up): the first to join again leads; until then nothing is delivered.
          if (next === undefined) pass.leadLeft = true;
          else pass.lead = next;
        }
        return;
      }
      if (passes.get(pass.name) === pass) passes.delete(pass.name);
      pass.unlisten?.();
      pass.unlisten = undefined;
    },
  };
  return shared;
}

/** Ends the members of a pass that are still in it (see `endMembers` in {@link createSharedPushes}). */
type EndMembers = (pass: Pass, members: readonly SharedMember[], error?: unknown) => void;

/** Writes one prepared message to every member that has not had it; a member whose target is full goes back to its follower. */
function writeAll(pass: Pass, prepared: unknown, arrival: number, finishing: boolean): void {
  for (const [member, last] of pass.members) {
    if (arrival <= last) continue;
    pass.members.set(member, arrival);
    if (member.sharing.take(prepared)) continue;
    pass.members.delete(member);
    member.rejoin(arrival, finishing);
  }
}

/** One stored message of the pass's test: prepared once, written to every member, and the end after the finishing one. */
function deliver(pass: Pass, event: TestMessageEvent, endMembers: EndMembers): void {
  const { message, arrival } = event;
  const finishing = isFinished(event.status);
  // Every member skips the same messages (their skip key is the pass's), so the lead tells.
  if (!pass.lead.skips(message)) {
    const prepared = pass.lead.sharing.prepare(message, pass.members.size);
    if (prepared instanceof Promise || pass.behind !== undefined) {
      const previous = pass.behind ?? Promise.resolve();
      const current: Promise<void> = previous
        .then(async () => writeAll(pass, await prepared, arrival, finishing))
        // Not prepared: the members it was for are failed with why, and out of the pass.
        .catch((error: unknown) => endMembers(pass, [...pass.members.keys()], error))
        .finally(() => {
          if (pass.behind === current) pass.behind = undefined;
        });
      pass.behind = current;
    } else writeAll(pass, prepared, arrival, finishing);
  } else {
    for (const [member, last] of pass.members) if (arrival > last) pass.members.set(member, arrival);
  }
  if (!finishing) return;
  // Those given the finishing message end once it is out (a member full with it ends on its own, once it can take more).
  const given = [...pass.members.keys()];
  after(pass, () => endMembers(pass, given));
}

/**
 * The test left the store: its members are failed with `error` once what is being written is out;
 * the pass goes at once (a member that joins later opens a new one), its members catching up find
 * the test gone themselves.
 */
function gone(passes: Map<string, Pass>, pass: Pass, error: unknown, endMembers: EndMembers): void {
  if (passes.get(pass.name) === pass) passes.delete(pass.name);
  // The source dropped the listener itself.
  pass.unlisten = undefined;
  const told = [...pass.members.keys()];
  after(pass, () => endMembers(pass, told, error));
}

/** Runs `then` once what the pass is writing is out: at once when nothing is. */
function after(pass: Pass, then: () => void): void {
  if (pass.behind === undefined) then();
  else void pass.behind.then(then);
}

function firstOf<T>(values: IterableIterator<T>): T | undefined {
  for (const value of values) return value;
  return undefined;
}
