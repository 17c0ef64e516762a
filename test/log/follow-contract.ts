/**
 * The following half of the result-log contract (result-log-contract.ts): replay then live with no
 * gap and no duplicate, delivery of what is new only, once, in order, on every replica sharing the
 * log, the end of a follower, and (where the log has one) no loss across a reconnect of the
 * connection that carries live updates.
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { plainMessage, type TestMessage } from '../../src/domain/types.js';
import { ServiceError } from '../../src/base/errors.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { isFollower } from '../../src/log/follower.js';
import { eventually } from '../support/graphql.js';
import { incoming, uniqueId } from './storage-contract.js';

/** Two handles on one log: two replicas sharing it, or the same log twice where it lives in one process. */
export interface FollowContext {
  readonly pair: () => Promise<{ readonly log: ResultLog; readonly peer: ResultLog }>;
  /** Drops the connection of `log` that carries live updates, and lets it reconnect (Redis). */
  readonly dropLiveConnection?: (log: ResultLog) => Promise<void>;
  /** Two handles on one log whose tests expire when the test says. */
  readonly expiring: () => Promise<Expiring>;
}

/** Two handles on one log, and a way to make one of its tests expire now (its followers find out within about 200 ms). */
export interface Expiring {
  readonly log: ResultLog;
  readonly peer: ResultLog;
  expire(correlationId: string): Promise<void>;
}

/** Reads up to `n` messages (fewer if the follower ends), as their sequences. */
export async function take(iterator: AsyncIterator<TestMessage>, n: number): Promise<Array<number | null>> {
  const out: Array<number | null> = [];
  for (let i = 0; i < n; i++) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value.sequence);
  }
  return out;
}

/** Reads every message until the follower ends. */
async function drain(iterator: AsyncIterator<TestMessage>): Promise<TestMessage[]> {
  const out: TestMessage[] = [];
  for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) out.push(next.value);
  return out;
}

/** Registers the following tests. */
export function describeFollowContract(context: FollowContext): void {
  describe('following', () => {
    let log: ResultLog;
    let peer: ResultLog;
    beforeEach(async () => {
      ({ log, peer } = await context.pair());
    });
    const record = (message: ReturnType<typeof incoming>, on: ResultLog = peer) => on.append([message]);

    it('replays stored messages, then delivers live ones, then ends after the final one', async () => {
      const id = uniqueId('follow');
      await record(incoming(id, { sequence: 1 }));
      await record(incoming(id, { sequence: 2 }));
      const stream = await log.follow(id, { queueLimit: 10 });
      expect(await take(stream, 2)).toEqual([1, 2]);
      await record(incoming(id, { sequence: 3 }));
      await record(incoming(id, { sequence: 3 })); // redelivery: not delivered again
      await record(incoming(id, { sequence: 4, final: true }));
      await record(incoming(id, { sequence: 5 })); // after the final one: stored, not delivered
      expect(await take(stream, 10)).toEqual([3, 4]);
      expect(await stream.next()).toEqual({ value: undefined, done: true });
      expect(log.followers(id)).toBe(0);
    });

    it('delivers what a batch stores, once, in batch order, to the followers of each test on every replica', async () => {
      const a = uniqueId('a');
      const b = uniqueId('b');
      for (const id of [a, b]) await log.create({ correlationId: id, input: null, owner: null });
      const onLog = await log.follow(a, { queueLimit: 100 });
      const onPeer = await peer.follow(a, { queueLimit: 100 });
      const otherTest = await log.follow(b, { queueLimit: 100 });
      const batch = [
        incoming(a, { sequence: 1, payload: { a: 'ü' } }),
        incoming(b, { sequence: 1 }),
        incoming(a, { sequence: 3 }),
        incoming(a, { sequence: 1 }),
        incoming(a, { sequence: 2, producedAt: 1_700_000_000_000 }),
        incoming(b, { sequence: 2, final: true }),
        incoming(a, { sequence: 4, status: 'COMPLETED' }),
      ];
      const results = await peer.append(batch);
      expect(results.map((r) => r.outcome)).toEqual(['inserted', 'inserted', 'inserted', 'duplicate', 'inserted', 'inserted', 'inserted']);
      // A redelivery of the whole batch stores nothing and so delivers nothing.
      await log.append(batch);
      const [fromLog, fromPeer, fromOther] = await Promise.all([drain(onLog), drain(onPeer), drain(otherTest)]);
      // Live messages come in the order stored (arrival), each the whole message as stored.
      expect(fromLog.map((m) => m.sequence)).toEqual([1, 3, 2, 4]);
      expect(fromPeer.map(plainMessage)).toEqual(fromLog.map(plainMessage));
      expect(plainMessage(fromLog[0] as TestMessage)).toEqual({ ...plainMessage(results[0]?.message as TestMessage), payload: { a: 'ü' } });
      expect(plainMessage(fromLog[2] as TestMessage)).toEqual(plainMessage(results[4]?.message as TestMessage));
      expect(fromOther.map((m) => [m.correlationId, m.sequence])).toEqual([
        [b, 1],
        [b, 2],
      ]);
    });

    it('has no gap and no duplicate between replay and live while another replica appends', async () => {
      const id = uniqueId('race');
      const total = 120;
      let appended = 0;
      const appending = (async () => {
        for (; appended < total; appended += 4) {
          await record(incoming(id, { sequence: appended + 1 }));
          await peer.append([2, 3, 4].map((k) => incoming(id, { sequence: appended + k, final: appended + k === total })));
        }
      })();
      await eventually(() => appended >= 40, 10_000, 'some messages stored');
      const stream = await log.follow(id, { queueLimit: 1000 });
      const got = await drain(stream);
      await appending;
      expect(got.map((m) => m.sequence)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    });

    it('ends right after the replay when the test already finished', async () => {
      const id = uniqueId('done');
      await record(incoming(id, { sequence: 1 }));
      await record(incoming(id, { sequence: 2, status: 'FAILED' }));
      const stream = await log.follow(id, { queueLimit: 10 });
      expect(await take(stream, 10)).toEqual([1, 2]);
      expect(log.followers(id)).toBe(0);
    });

    it('skips messages at or below afterSequence, in the replay and live', async () => {
      const id = uniqueId('after');
      for (const seq of [1, 2, 3]) await record(incoming(id, { sequence: seq }));
      await record(incoming(id, { payload: 'unsequenced, replay' }));
      const stream = await log.follow(id, { afterSequence: 2, queueLimit: 10 });
      await record(incoming(id, { messageId: 'late', sequence: 2 }));
      await record(incoming(id, { payload: 'unsequenced, live' }));
      await record(incoming(id, { sequence: 9, final: true }));
      expect(await take(stream, 10)).toEqual([3, null, 9]);
    });

    it('resumes exactly after a key, sequenced or not, in the replay and live', async () => {
      const id = uniqueId('after-key');
      const stored = await peer.append([
        incoming(id, { payload: 'a' }),
        incoming(id, { sequence: 1 }),
        incoming(id, { payload: 'b' }),
        incoming(id, { payload: 'c' }),
      ]);
      const keys = stored.map((r) => r.message.key);
      // After an unsequenced message (which afterSequence cannot name): the rest of the order, then live ones.
      const stream = await log.follow(id, { afterKey: keys[2] as string, queueLimit: 10 });
      await record(incoming(id, { payload: 'd' }));
      await record(incoming(id, { sequence: 0, payload: 'late, sorted before the key' }));
      await record(incoming(id, { payload: 'e', final: true }));
      const got = await drain(stream);
      expect(got.map((m) => m.payload)).toEqual(['c', 'd', 'late, sorted before the key', 'e']);
      // After the last message of a finished test: nothing, and the follower ends.
      const done = await log.follow(id, { afterKey: (got.at(-1) as TestMessage).key, queueLimit: 10 });
      expect(await done.next()).toEqual({ value: undefined, done: true });
      expect(log.followers(id)).toBe(0);
    });

    it('replays in the order the messages arrived, whatever their sequences, and resumes after a place exactly', async () => {
      const id = uniqueId('arrival');
      for (const sequence of [3, 1, 2]) await record(incoming(id, { sequence }));
      const stream = await log.follow(id, { queueLimit: 10 });
      const first = await take(stream, 2);
      expect(first).toEqual([3, 1]);
      await stream.return?.();
      // A late message that sorts before everything, then resume after the second one received.
      await record(incoming(id, { sequence: 0 }));
      const all = await log.get(id);
      const second = all?.messages.find((m) => m.sequence === 1) as TestMessage;
      expect(second.arrival).toBe(2);
      const resumed = await log.follow(id, { afterArrival: second.arrival, afterKey: second.key, queueLimit: 10 });
      await record(incoming(id, { sequence: 4, final: true }));
      expect(await take(resumed, 10)).toEqual([2, 0, 4]);
      // A place that holds another message than the cursor names (a test expired and started again): the cursor is expired.
      await expect(log.follow(id, { afterArrival: 1, afterKey: second.key, queueLimit: 10 })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
      expect(log.followers(id)).toBe(0);
    });

    it('resumes exactly from the last message received, whatever the order of arrival and wherever it disconnects (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 9 }).chain((n) =>
            fc.record({
              // The first n - 1 sequences in any order, then the final one.
              order: fc.shuffledSubarray(
                Array.from({ length: n - 1 }, (_, i) => i + 1),
                { minLength: n - 1, maxLength: n - 1 },
              ),
              // At each step: store the next message (true) or receive one (false).
              steps: fc.array(fc.boolean(), { minLength: 2 * n, maxLength: 4 * n }),
              // Disconnect (and resume from the last message received) after this many received.
              cuts: fc.uniqueArray(fc.integer({ min: 1, max: n }), { maxLength: 3 }),
            }),
          ),
          async ({ order, steps, cuts }) => {
            const id = uniqueId('resume-property');
            const arrivals = [...order, order.length + 1];
            let stored = 0;
            const store = () => record(incoming(id, { sequence: arrivals[stored] as number, final: ++stored === arrivals.length }));
            await store();
            const received: TestMessage[] = [];
            let stream = await log.follow(id, { queueLimit: 100 });
            const receive = async () => {
              const next = await Promise.race([
                stream.next(),
                new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no push within 5 s')), 5000)),
              ]);
              if (next.done === true) throw new Error(`ended after ${received.length} of ${arrivals.length}`);
              received.push(next.value);
              if (cuts.includes(received.length) && received.length < arrivals.length) {
                await stream.return?.();
                const last = received.at(-1) as TestMessage;
                stream = await log.follow(id, { afterArrival: last.arrival, afterKey: last.key, queueLimit: 100 });
              }
            };
            for (const step of [...steps, ...Array<boolean>(2 * arrivals.length).fill(true)]) {
              if (received.length === arrivals.length) break;
              if ((step && stored < arrivals.length) || received.length === stored) await store();
              else await receive();
            }
            while (received.length < arrivals.length) await receive();
            // Every message once, in the order it arrived.
            expect(received.map((m) => m.sequence)).toEqual(arrivals);
            await stream.return?.();
          },
        ),
        { numRuns: 25, seed: 20261127 },
      );
    });

    it('refuses a cursor whose message or test is no longer there with CURSOR_EXPIRED (never a fresh start), one given with afterSequence with BAD_USER_INPUT, and leaves no follower behind', async () => {
      const id = uniqueId('bad-key');
      await record(incoming(id, { sequence: 1 }));
      await expect(log.follow(id, { afterKey: 's:2', queueLimit: 10 })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
      await expect(log.follow(id, { afterArrival: 2, afterKey: 's:2', queueLimit: 10 })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
      await expect(log.follow(id, { afterKey: 's:1', afterSequence: 1, queueLimit: 10 })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
      // A test gone (expired, evicted, or held by a replica that is gone), followed from a cursor: expired, not a fresh start.
      await expect(log.follow(uniqueId('nope'), { afterKey: 's:1', queueLimit: 10 })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
      // Without a cursor, an unknown test is NOT_FOUND.
      await expect(log.follow(uniqueId('nope'), { queueLimit: 10 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(log.followers(id)).toBe(0);
    });

    it('ends when the final message is one that afterSequence skips', async () => {
      const id = uniqueId('skip-final');
      await log.create({ correlationId: id, input: null, owner: null });
      const stream = await log.follow(id, { afterSequence: 5, queueLimit: 10 });
      await record(incoming(id, { sequence: 3, final: true }));
      await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
      expect(log.followers(id)).toBe(0);
    });

    it('rejects an unknown test, and one the caller may not see, with NOT_FOUND, and leaves no follower behind', async () => {
      const hidden = uniqueId('hidden');
      await log.create({ correlationId: hidden, input: null, owner: 'alice' });
      await expect(log.follow(uniqueId('nope'), { queueLimit: 10 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(log.follow(hidden, { queueLimit: 10, canSee: (test) => test.owner === 'bob' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(log.followers()).toBe(0);
    });

    it('ends at once on return() while waiting, and keeps the other followers of the test', async () => {
      const id = uniqueId('return');
      await log.create({ correlationId: id, input: null, owner: null });
      const first = await log.follow(id, { queueLimit: 10 });
      const second = await log.follow(id, { queueLimit: 10 });
      const pending = first.next();
      expect(log.followers(id)).toBe(2);
      await first.return?.();
      await first.return?.(); // twice is harmless
      await expect(pending).resolves.toEqual({ value: undefined, done: true });
      expect(log.followers(id)).toBe(1);
      await record(incoming(id, { sequence: 1, final: true }));
      expect(await take(second, 10)).toEqual([1]);
      expect(log.followers(id)).toBe(0);
    });

    it('closes a follower that falls more than queueLimit messages behind', async () => {
      const id = uniqueId('slow');
      await log.create({ correlationId: id, input: null, owner: null });
      const stream = await log.follow(id, { queueLimit: 3 });
      for (let seq = 1; seq <= 5; seq++) await record(incoming(id, { sequence: seq }));
      await eventually(() => log.followers(id) === 0, 5000, 'the follower to be cut off');
      const error = await stream.next().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code).toBe('SUBSCRIBER_TOO_SLOW');
      // What the client reads: what happened and how to resume, in plain words.
      expect((error as ServiceError).message).toBe(
        'More than 3 messages waited for this subscriber; the subscription was closed. Resubscribe with after (the cursor of the last message received) to resume.',
      );
    });

    /** Pushes `follower` to a target that takes `room` messages at a time; `room` is refilled by the test. */
    const pushTo = (follower: AsyncIterableIterator<TestMessage>, room: number) => {
      if (!isFollower(follower)) throw new Error('follow answered no Follower');
      const state = { got: [] as Array<number | null>, room, ended: false, failed: undefined as unknown };
      follower.push({
        deliver: (message) => {
          state.got.push(message.sequence);
          state.room -= 1;
          return state.room > 0;
        },
        end: () => (state.ended = true),
        fail: (error) => (state.failed = error),
      });
      return { state, resume: (room: number) => ((state.room = room), follower.resume()) };
    };

    /** The error a pulled follower ends with once it has read `expected`. */
    const endOf = async (stream: AsyncIterator<TestMessage>, expected: Array<number | null>) => {
      expect(await take(stream, expected.length)).toEqual(expected);
      return stream.next().then(
        (next) => new Error(`the follower went on: ${JSON.stringify(next)}`),
        (error: unknown) => error,
      );
    };

    it('ends the followers of a test that expires while followed with TEST_EXPIRED, pulled and pushed, on every replica', async () => {
      const short = await context.expiring();
      const id = uniqueId('expires');
      await short.peer.append([incoming(id, { sequence: 1 })]);
      const pulled = await short.log.follow(id, { queueLimit: 10 });
      const onPeer = await short.peer.follow(id, { queueLimit: 10 });
      const pushed = pushTo(await short.log.follow(id, { queueLimit: 10 }), 10);
      expect(pushed.state.got).toEqual([1]);
      await short.expire(id);
      for (const ended of [await endOf(pulled, [1]), await endOf(onPeer, [1])]) {
        expect(ended).toBeInstanceOf(ServiceError);
        expect((ended as ServiceError).code).toBe('TEST_EXPIRED');
        expect((ended as ServiceError).extensions).toMatchObject({ code: 'TEST_EXPIRED', reason: 'expired' });
      }
      await eventually(() => pushed.state.failed !== undefined, 10_000, 'the pushed follower to be failed');
      expect((pushed.state.failed as ServiceError).code).toBe('TEST_EXPIRED');
      expect(pushed.state.ended).toBe(false);
      expect(await short.log.get(id)).toBeNull();
      await eventually(() => short.log.followers(id) === 0 && short.peer.followers(id) === 0, 5000, 'no follower left');
    });

    it('ends a paused follower whose test expired with TEST_EXPIRED when it catches up, not NOT_FOUND', async () => {
      const short = await context.expiring();
      const id = uniqueId('expires-paused');
      await short.peer.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]);
      const pushed = pushTo(await short.log.follow(id, { queueLimit: 10 }), 1);
      expect(pushed.state.got).toEqual([1]);
      await short.expire(id);
      await eventually(async () => (await short.log.get(id)) === null, 10_000, 'the test to expire');
      pushed.resume(10);
      await eventually(() => pushed.state.failed !== undefined, 5000, 'the catch-up to fail');
      expect((pushed.state.failed as ServiceError).code).toBe('TEST_EXPIRED');
      // The rest of the snapshot it replays is the follower's own; nothing after it.
      expect(pushed.state.got).toEqual([1, 2]);
    });

    it('pushes to a target that fills up during the replay: pauses, holding only its place, and catches up exactly, whatever the order of arrival', async () => {
      const id = uniqueId('pushed-replay');
      for (const sequence of [2, 1, 3]) await record(incoming(id, { sequence }));
      const follower = await log.follow(id, { queueLimit: 2 });
      // Room for one: the replay (in the order of arrival) stops after its first message.
      const pushed = pushTo(follower, 1);
      expect(pushed.state.got).toEqual([2]);
      await eventually(() => log.followers(id) === 0, 5000, 'the paused follower to be counted no more');
      // More arrive than its queue limit would hold, out of order: a paused follower holds none of them.
      for (const sequence of [7, 5, 6, 4]) await record(incoming(id, { sequence }));
      pushed.resume(100);
      // The rest of the replay, then what arrived meanwhile, in the order it arrived.
      await eventually(() => pushed.state.got.length === 7, 5000, 'the catch-up');
      expect(pushed.state.got).toEqual([2, 1, 3, 7, 5, 6, 4]);
      await record(incoming(id, { sequence: 8, final: true }));
      await eventually(() => pushed.state.ended, 5000, 'the end after the final message');
      expect(pushed.state.got).toEqual([2, 1, 3, 7, 5, 6, 4, 8]);
      expect(pushed.state.failed).toBeUndefined();
      expect(log.followers(id)).toBe(0);
    });

    it('pushes live messages as they are stored, and a target that fills up live misses nothing and gets nothing twice', async () => {
      const id = uniqueId('pushed-live');
      await record(incoming(id, { sequence: 1 }));
      const follower = await log.follow(id, { queueLimit: 1 });
      const pushed = pushTo(follower, 10);
      expect(pushed.state.got).toEqual([1]);
      // Not paused: resume() does nothing but set the room, for two more.
      pushed.resume(2);
      await record(incoming(id, { sequence: 3 }));
      await eventually(() => pushed.state.got.length === 2, 5000, 'the first live message');
      await record(incoming(id, { sequence: 2 }));
      // Full after this one: paused, and the next ones are not pushed.
      await eventually(() => pushed.state.got.length === 3 && log.followers(id) === 0, 5000, 'the pause');
      for (const sequence of [6, 4]) await record(incoming(id, { sequence }));
      await record(incoming(id, { sequence: 4 })); // a redelivery: stored once, so caught up once
      await record(incoming(id, { sequence: 5, final: true }));
      await record(incoming(id, { sequence: 9 })); // after the final one: stored, not delivered
      pushed.resume(100);
      await eventually(() => pushed.state.ended, 5000, 'the end after the final message');
      expect(pushed.state.got).toEqual([1, 3, 2, 6, 4, 5]);
      expect(log.followers(id)).toBe(0);
    });

    it('writes the live followers of one test that share a key in one pass: each message prepared once for all, each written once in order, a full one caught up on its own', async () => {
      const id = uniqueId('shared');
      await record(incoming(id, { sequence: 1 }));
      const prepared: Array<{ sequence: number | null; reached: number; key: string; pass: string }> = [];
      /** A sharing target of `key`, with room for `room` messages at a time. */
      const share = async (key: string, room: number, afterSequence?: number) => {
        const follower = await log.follow(id, { queueLimit: 2, ...(afterSequence === undefined ? {} : { afterSequence }) });
        if (!isFollower(follower)) throw new Error('follow answered no Follower');
        const state = { got: [] as Array<number | null>, taken: 0, room, ended: false, failed: undefined as unknown };
        const fill = () => ((state.room -= 1), state.room > 0);
        follower.push({
          shareKey: key,
          deliver: (message: TestMessage) => (state.got.push(message.sequence), fill()),
          prepare: (message: TestMessage, reached: number) => (
            prepared.push({ sequence: message.sequence, reached, key, pass: `${key}/${afterSequence ?? ''}` }),
            message.sequence
          ),
          take: (sequence: unknown) => (state.got.push(sequence as number | null), (state.taken += 1), fill()),
          end: () => (state.ended = true),
          fail: (error: unknown) => (state.failed = error),
        } as Parameters<typeof follower.push>[0]);
        return { state, follower, resume: (more: number) => ((state.room = more), follower.resume()) };
      };
      const many = await Promise.all(Array.from({ length: 5 }, () => share('a', 1000)));
      const slow = await share('a', 4);
      const other = await share('b', 1000);
      const skipping = await share('a', 1000, 3);
      const skippingToo = await share('a', 1000, 3);
      // Full with the final message itself: it must still be ended once it asks for more.
      const fullAtEnd = await share('a', 10);
      await eventually(() => log.followers(id) === 10, 5000, 'every follower to be live');
      for (let sequence = 2; sequence <= 9; sequence++) await record(incoming(id, { sequence }));
      await eventually(() => many.every((m) => m.state.got.length === 9) && other.state.got.length === 9, 5000, 'the live messages');
      // Live messages came through the pass (take), prepared once per pass and message, for all its members at once.
      for (const m of [...many, other]) expect(m.state.taken).toBeGreaterThan(0);
      const ofA = prepared.filter((p) => p.pass === 'a/' && p.reached > 1);
      expect(new Set(ofA.map((p) => p.sequence)).size).toBe(ofA.length);
      expect(Math.max(...ofA.map((p) => p.reached))).toBe(7);
      // The two that skip the same messages share a pass of their own.
      const skippers = prepared.filter((p) => p.pass === 'a/3');
      expect(skippers.length).toBeGreaterThan(0);
      expect(new Set(skippers.map((p) => p.sequence)).size).toBe(skippers.length);
      expect(skippers.every((p) => p.reached === 2 && (p.sequence ?? 0) > 3)).toBe(true);
      // The full one was paused after its fourth message and holds nothing; the rest went on.
      expect(slow.state.got).toEqual([1, 2, 3, 4]);
      expect(skipping.state.got).toEqual([4, 5, 6, 7, 8, 9]);
      slow.resume(1000);
      await eventually(() => slow.state.got.length === 9, 5000, 'the catch-up');
      await record(incoming(id, { sequence: 10, final: true }));
      const all = Array.from({ length: 10 }, (_, i) => i + 1);
      const ending = [...many, slow, other, skipping, skippingToo];
      await eventually(() => ending.every((m) => m.state.ended), 5000, 'the end');
      for (const m of [...many, slow, other]) expect(m.state.got).toEqual(all);
      for (const m of [skipping, skippingToo]) expect(m.state.got).toEqual(all.slice(3));
      // Its room ran out with the final message: not ended until it can take more, then ended, nothing again.
      expect(fullAtEnd.state.got).toEqual(all);
      expect(fullAtEnd.state.ended).toBe(false);
      fullAtEnd.resume(1000);
      await eventually(() => fullAtEnd.state.ended, 5000, 'the end of the one full at the final message');
      expect(fullAtEnd.state.got).toEqual(all);
      for (const m of [...ending, fullAtEnd]) expect(m.state.failed).toBeUndefined();
      for (const m of [...ending, fullAtEnd]) await m.follower.return?.();
      expect(log.followers(id)).toBe(0);
    });

    it("lets a pass end its members itself: at the test's end, when a message cannot be prepared, and when a follower is thrown, none waits for its reader's return", async () => {
      /** Live sharing followers of `id` under one key, whose `prepare` fails for sequence `failsAt`. */
      const sharing = async (id: string, count: number, failsAt?: number) =>
        Promise.all(
          Array.from({ length: count }, async () => {
            const follower = await log.follow(id, { queueLimit: 10 });
            if (!isFollower(follower)) throw new Error('follow answered no Follower');
            const state = { got: [] as Array<number | null>, ended: 0, failed: [] as unknown[] };
            follower.push({
              shareKey: 'k',
              deliver: (message: TestMessage) => (state.got.push(message.sequence), true),
              prepare: (message: TestMessage) => (message.sequence === failsAt ? Promise.reject(new Error('not prepared')) : message.sequence),
              take: (sequence: unknown) => (state.got.push(sequence as number | null), true),
              end: () => (state.ended += 1),
              fail: (error: unknown) => state.failed.push(error),
            } as Parameters<typeof follower.push>[0]);
            return { state, follower };
          }),
        );
      const finishing = uniqueId('pass-end');
      const failing = uniqueId('pass-fail');
      const thrown = uniqueId('pass-throw');
      for (const id of [finishing, failing, thrown]) await record(incoming(id, { sequence: 1 }));
      const atEnd = await sharing(finishing, 3);
      const notPrepared = await sharing(failing, 2, 2);
      const [alone] = await sharing(thrown, 1);
      await eventually(() => log.followers(finishing) === 3 && log.followers(failing) === 2 && log.followers(thrown) === 1, 5000, 'every follower live');
      await record(incoming(finishing, { sequence: 2 }));
      await record(incoming(finishing, { sequence: 3, final: true }));
      await record(incoming(failing, { sequence: 2 }));
      // Released by the pass, nobody returned: the test's end ended each once, the failed message failed each once.
      await eventually(() => log.followers(finishing) === 0, 5000, 'the finished test to hold no follower');
      await eventually(() => log.followers(failing) === 0, 5000, 'the failed followers to be released');
      for (const m of atEnd) expect(m.state).toEqual({ got: [1, 2, 3], ended: 1, failed: [] });
      for (const m of notPrepared) expect(m.state.failed.map((e) => (e as Error).message)).toEqual(['not prepared']);
      // A later message reaches none of them.
      await record(incoming(failing, { sequence: 3 }));
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const m of notPrepared) expect(m.state.got).toEqual([1]);
      // Thrown by its reader: out of its pass as a return would take it.
      await expect((alone as (typeof atEnd)[number]).follower.throw?.(new Error('reader failed'))).rejects.toThrow('reader failed');
      expect(log.followers(thrown)).toBe(0);
      // Returning them afterwards is harmless.
      for (const m of [...atEnd, ...notPrepared]) await m.follower.return?.();
      expect(log.followers(finishing) + log.followers(failing)).toBe(0);
    });

    it('accepts appends with nobody following', async () => {
      const results = await log.append([incoming(uniqueId('alone'), { sequence: 1 })]);
      expect(results.map((r) => r.outcome)).toEqual(['inserted']);
    });

    if (context.dropLiveConnection !== undefined) {
      const drop = context.dropLiveConnection;
      it('loses nothing and repeats nothing when the live connection drops while messages are appended', async () => {
        const id = uniqueId('reconnect');
        const total = 60;
        await record(incoming(id, { sequence: 1 }));
        const stream = await log.follow(id, { queueLimit: 1000 });
        const got: TestMessage[] = [];
        const reading = (async () => {
          for (let next = await stream.next(); next.done !== true; next = await stream.next()) got.push(next.value);
        })();
        await record(incoming(id, { sequence: 2 }));
        await eventually(() => got.length === 2, 5000, 'the first live message');
        // Appended while the follower's connection is down and reconnecting: their notices are lost.
        const dropping = drop(log);
        for (let seq = 3; seq <= total; seq++) await record(incoming(id, { sequence: seq, final: seq === total }));
        await dropping;
        await reading;
        expect(got.map((m) => m.sequence)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      });
    }
  });
}
