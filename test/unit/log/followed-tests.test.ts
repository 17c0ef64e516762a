/**
 * The log's followed tests (src/log/followed-tests.ts) over a source whose listeners and losses
 * are in the test's hands (a pure seam): one listener of a test for all of its followers, on their
 * own or in a group; a message a failover lost, stored again, only for the followers that lack it
 * (those that came after the loss); a failover told while a follower's catch-up read was out moving it and reading
 * again; the test's leaving the store told to each. Following over the real logs is the
 * contract's (test/log/follow-contract.ts).
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/base/errors.js';
import type { TestMessage, TestMessageEvent } from '../../../src/domain/types.js';
import { createFollowedTests } from '../../../src/log/followed-tests.js';
import { openFollower } from '../../../src/log/follower.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';
import { incoming } from '../../log/storage-contract.js';
import type { EventListener, FollowedTests, FollowSource, ListenOptions, TestFollower } from '../../../src/log/follower-types.js';

/** A source of one test's events: its listeners, how often it was listened to, and the failovers it tells of. */
function fakeSource() {
  const listeners = new Map<EventListener, ListenOptions | undefined>();
  const state = { listens: 0, unlistens: 0 };
  const source: Pick<FollowSource, 'listen'> = {
    async listen(_id, listener, options) {
      state.listens += 1;
      listeners.set(listener, options);
      return () => {
        state.unlistens += 1;
        listeners.delete(listener);
      };
    },
  };
  /** Emits the message of `sequence`, at its own place unless given another (a list a failover shortened numbers anew). */
  const emit = (sequence: number, lost = false, arrival = sequence) => {
    const status: TestMessageEvent['status'] = 'RUNNING';
    const message = { key: `k${sequence}`, sequence, status, payload: null, arrival } as unknown as TestMessage;
    for (const listener of listeners.keys()) listener({ message, status, arrival }, lost);
  };
  /** A failover cut the list back to `kept` arrivals, losing the messages of `lostKeys` after them (what the Redis tail tells before it emits anew). */
  const realign = (kept: number, lostKeys: string[] = []) => {
    for (const options of listeners.values()) options?.realigned?.({ kept, lostKeys, lostAfter: kept });
  };
  const gone = (error: ServiceError) => {
    const all = [...listeners.values()];
    listeners.clear();
    for (const options of all) options?.gone?.(error);
  };
  return { source, state, emit, realign, gone, listening: () => listeners.size };
}

/** A follower as the followed tests see it: what it heard on its own, what its group wrote to it, how it ended. */
function fakeFollower(shareKey = 'op', slowPrepare = false) {
  const got: Array<{ sequence: number | null; via: 'heard' | 'group' }> = [];
  const outcome: { left?: ServiceError; ended?: boolean; failed?: unknown } = {};
  // The keys of the lost messages it was told of: as if it had been given every one.
  const had = new Set<string>();
  const follower: TestFollower = {
    correlationId: 't',
    heard: (event) => got.push({ sequence: event.message.sequence, via: 'heard' }),
    leftStore: (error) => (outcome.left = error),
    sharing: {
      shareKey,
      // Slow: made a few turns later, as one that reads the store is.
      prepare: (message: TestMessage) => (slowPrepare ? new Promise((resolve) => setTimeout(() => resolve(message.sequence), 5)) : message.sequence),
      take: (prepared: unknown) => (got.push({ sequence: prepared as number, via: 'group' }), true),
      deliver: () => true,
      end: () => undefined,
      fail: () => undefined,
    },
    skipKey: '',
    groupPlace: 0,
    skips: () => false,
    filled: () => undefined,
    realigned: ({ lostKeys }) => lostKeys.forEach((key) => had.add(key)),
    isPaused: () => false,
    hadBefore: (key) => had.has(key),
    ended: (error) => {
      if (error === undefined) outcome.ended = true;
      else outcome.failed = error;
    },
  };
  return { follower, got, outcome, sequences: () => got.map((g) => g.sequence) };
}

/** Two followers listening to the test: one on its own, the other put in its group. */
async function aloneAndShared(followed: FollowedTests) {
  const alone = fakeFollower();
  const shared = fakeFollower();
  await followed.listen(alone.follower);
  await followed.listen(shared.follower);
  followed.share(shared.follower, 0);
  return { alone, shared };
}

/** A message of `sequence` as the store gives it, at `arrival`. */
const stored = (sequence: number, arrival: number, final = false) => ({
  message: { key: `k${sequence}`, sequence, status: final ? 'COMPLETED' : 'RUNNING', final } as unknown as TestMessage,
  arrival,
});

/** Pushes `follower` to a target that does not share, full once it took `room` messages (`open` makes room for all). */
function pushCounting(follower: Awaited<ReturnType<typeof openFollower>>, room: number) {
  const got: Array<number | null> = [];
  let left = room;
  let ended = false;
  follower.push({
    deliver: (message: TestMessage) => (got.push(message.sequence), (left -= 1) > 0),
    end: () => (ended = true),
    fail: () => undefined,
  });
  return { got, ended: () => ended, open: () => (left = Infinity) };
}

describe('the followed tests of a log', () => {
  it('listen to a test once for all of its followers, alone or in groups, and stop when the last leaves', async () => {
    const { source, state, emit, listening } = fakeSource();
    const followed = createFollowedTests(source);
    const [a, b, c, d] = [fakeFollower(), fakeFollower(), fakeFollower('other'), fakeFollower()];
    for (const f of [a, b, c, d]) await followed.listen(f.follower);
    expect(state.listens).toBe(1);
    expect(followed.share(a.follower, 0)).toBe(true);
    expect(followed.share(b.follower, 0)).toBe(true);
    expect(followed.share(c.follower, 0)).toBe(true);
    // d listens on its own (a pulled follower, say).
    expect(followed.count('t')).toBe(4);
    emit(1);
    emit(2);
    expect(a.got).toEqual([
      { sequence: 1, via: 'group' },
      { sequence: 2, via: 'group' },
    ]);
    expect(b.sequences()).toEqual([1, 2]);
    expect(c.sequences()).toEqual([1, 2]);
    expect(d.got.map((g) => g.via)).toEqual(['heard', 'heard']);
    for (const f of [a, b, c]) followed.leave(f.follower);
    expect(state.unlistens).toBe(0);
    followed.unlisten(d.follower);
    expect(state.unlistens).toBe(1);
    expect(listening()).toBe(0);
    expect(followed.count()).toBe(0);
    // One that never listened, or left twice: nothing to do.
    followed.leave(d.follower);
    followed.leave(fakeFollower().follower);
    expect(state.unlistens).toBe(1);
  });

  it('give a message a failover lost, stored again, only to the followers that lack it: those that came after the loss', async () => {
    const { source, emit, realign } = fakeSource();
    const followed = createFollowedTests(source);
    const { alone: early, shared: earlyShared } = await aloneAndShared(followed);
    emit(1);
    // A failover loses 1 after it was delivered, and tells the followers listening; those that come now read a list without it.
    realign(0, ['k1']);
    const { alone: later, shared: laterShared } = await aloneAndShared(followed);
    // Stored again: the early ones have it; the later ones do not.
    emit(1, true);
    emit(2);
    expect(early.sequences()).toEqual([1, 2]);
    expect(earlyShared.sequences()).toEqual([1, 2]);
    expect(later.sequences()).toEqual([1, 2]);
    expect(laterShared.sequences()).toEqual([1, 2]);
    // A loss after every follower came: nobody lacks what it lost.
    emit(3);
    realign(2, ['k3']);
    emit(3, true);
    for (const f of [early, earlyShared, later, laterShared]) expect(f.sequences()).toEqual([1, 2, 3]);
  });

  it('give a group the new messages numbered again after a failover shortened the list, even while earlier ones are still being prepared', async () => {
    for (const slow of [false, true]) {
      const { source, emit, realign } = fakeSource();
      const followed = createFollowedTests(source);
      const member = fakeFollower('op', slow);
      await followed.listen(member.follower);
      followed.share(member.follower, 0);
      emit(1);
      emit(2);
      emit(3);
      // The list is cut back to 2 (3 lost); what comes is numbered 3 and 4.
      realign(2, ['k3']);
      emit(30, false, 3);
      emit(40, false, 4);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(member.sequences()).toEqual([1, 2, 3, 30, 40]);
      followed.leave(member.follower);
    }
  });

  it("catch a grouped follower that filled up at a message numbered again up from its group's place, not the one it joined with", async () => {
    // Its snapshot from a real log (10 messages); its live events and catch-up reads from the test.
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10, maxMessagesPerTest: 100 });
    await log.create({ correlationId: 't', input: null, owner: null });
    await log.append(Array.from({ length: 10 }, (_, i) => incoming('t', { sequence: i + 1 })));
    const { source, emit, realign } = fakeSource();
    const caughtUpAfter: number[] = [];
    const followed = createFollowedTests(source);
    const follower = await openFollower(
      { read: (id) => log.get(id), listen: source.listen, readFrom: async (_id, passed) => (caughtUpAfter.push(passed), []) },
      't',
      { queueLimit: 100 },
      followed,
    );
    const got: Array<number | null> = [];
    let room = 13;
    const fits = () => (room -= 1) > 0;
    follower.push({
      shareKey: 'op',
      deliver: (message: TestMessage) => (got.push(message.sequence), fits()),
      prepare: (message: TestMessage) => message.sequence,
      take: (sequence: unknown) => (got.push(sequence as number), fits()),
      end: () => undefined,
      fail: () => undefined,
    } as Parameters<typeof follower.push>[0]);
    emit(11);
    emit(12);
    // A failover cut the list back to 7: the next result is numbered 8, and fills the target.
    realign(7, ['k8', 'k9', 'k10', 'k11', 'k12']);
    emit(80, false, 8);
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 80]);
    // Out of its group, paused: it listens on its own only to keep its place, and is not counted.
    expect(followed.count('t')).toBe(0);
    follower.resume();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // What was stored after 8 is read from there (from 10, where it joined, 9 and 10 would be passed over).
    expect(caughtUpAfter).toEqual([8]);
    await follower.return?.();
    await log.dispose();
  });

  it('move a follower told of a failover while its catch-up read was out where the failover says, and read again from there', async () => {
    // Its snapshot from a real log (3 messages); its live events and catch-up reads from the test.
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10, maxMessagesPerTest: 100 });
    await log.create({ correlationId: 't', input: null, owner: null });
    await log.append([1, 2, 3].map((sequence) => incoming('t', { sequence })));
    const { source, emit, realign } = fakeSource();
    const reads: Array<{ after: number; answer: (arrived: Array<{ message: TestMessage; arrival: number }>) => void }> = [];
    const followed = createFollowedTests(source);
    const follower = await openFollower(
      { read: (id) => log.get(id), listen: source.listen, readFrom: (_id, after) => new Promise((answer) => reads.push({ after, answer })) },
      't',
      { queueLimit: 100 },
      followed,
    );
    const { got, ended, open } = pushCounting(follower, 5);
    emit(4);
    emit(5);
    // Full with 5; it resumes, and its read from 5 is out when the failover is told: 4 and 5 lost,
    // 60 stored at place 4, then 4 stored again at place 5.
    open();
    follower.resume();
    await new Promise((resolve) => setTimeout(resolve, 5));
    realign(3, ['k4', 'k5']);
    emit(60, false, 4);
    emit(4, true, 5);
    // The read counted the old numbers (nothing after 5): it is read again from where the list now ends.
    reads[0]?.answer([]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    reads[1]?.answer([stored(60, 4), stored(4, 5), stored(7, 6, true)]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reads.map((read) => read.after)).toEqual([5, 3]);
    expect(got).toEqual([1, 2, 3, 4, 5, 60, 7]);
    expect(ended()).toBe(true);
    await log.dispose();
  });

  it('judge by its place, not its snapshot, a late event numbered again past what the list kept, once a failover moved the follower', async () => {
    // Its snapshot from a real log (5 messages); its live events and catch-up reads from the test.
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10, maxMessagesPerTest: 100 });
    await log.create({ correlationId: 't', input: null, owner: null });
    await log.append([1, 2, 3, 4, 5].map((sequence) => incoming('t', { sequence })));
    const { source, emit, realign } = fakeSource();
    const follower = await openFollower(
      { read: (id) => log.get(id), listen: source.listen, readFrom: async (_id, after) => (after === 3 ? [stored(60, 4)] : []) },
      't',
      { queueLimit: 100 },
      createFollowedTests(source),
    );
    const { got, ended, open } = pushCounting(follower, 1);
    // Paused in its replay when a failover loses 4 and 5, and 60 is stored at place 4.
    realign(3, ['k4', 'k5']);
    open();
    follower.resume();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(got).toEqual([1, 2, 3, 4, 5, 60]);
    // The tail delivers 60 late, at place 4: inside the snapshot's old places, yet its catch-up read gave it.
    emit(60, false, 4);
    emit(7, false, 5);
    expect(got).toEqual([1, 2, 3, 4, 5, 60, 7]);
    expect(ended()).toBe(false);
    await log.dispose();
  });

  it('tell each follower that the test left the store: those on their own at once, the members of a group through their end', async () => {
    const { source, gone, state } = fakeSource();
    const followed = createFollowedTests(source);
    const { alone, shared: member } = await aloneAndShared(followed);
    const error = new ServiceError('TEST_EXPIRED', 'The test expired.');
    gone(error);
    expect(alone.outcome.left).toBe(error);
    expect(member.outcome.failed).toBe(error);
    expect(followed.count('t')).toBe(0);
    // A follower that comes now listens anew.
    await followed.listen(fakeFollower().follower);
    expect(state.listens).toBe(2);
  });
});
