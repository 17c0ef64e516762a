import { describe, expect, it } from 'vitest';
import type { IncomingMessage, TestMessage } from '../../src/domain/types.js';
import { ServiceError } from '../../src/errors.js';
import { createMemoryPubSub } from '../../src/pubsub/memory-pubsub.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import { openTestMessageStream } from '../../src/subscriptions/test-message-stream.js';
import { incoming } from '../store/store-contract.js';

function setup() {
  const store = createMemoryStore({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 1000 });
  const pubsub = createMemoryPubSub();
  const recordChunk = createResultRecorder({ store, pubsub });
  const record = (message: IncomingMessage) => recordChunk([message]);
  return { store, pubsub, record };
}

async function take(iterator: AsyncIterator<TestMessage>, n: number): Promise<Array<number | null>> {
  const out: Array<number | null> = [];
  for (let i = 0; i < n; i++) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value.sequence);
  }
  return out;
}

describe('openTestMessageStream', () => {
  it('replays stored messages, then pushes live ones, then completes after the final one', async () => {
    const { store, pubsub, record } = setup();
    await record(incoming('t', { sequence: 1 }));
    await record(incoming('t', { sequence: 2 }));
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', queueLimit: 10 });
    expect(await take(stream, 2)).toEqual([1, 2]);
    await record(incoming('t', { sequence: 3 }));
    await record(incoming('t', { sequence: 3 })); // redelivery: not pushed
    await record(incoming('t', { sequence: 4, final: true }));
    await record(incoming('t', { sequence: 5 })); // after the final one: stored, not pushed
    expect(await take(stream, 10)).toEqual([3, 4]);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(pubsub.listenerCount('t')).toBe(0);
  });

  it('has no gap and no duplicate when a message is stored while the snapshot is read', async () => {
    const { store, pubsub, record } = setup();
    await record(incoming('t', { sequence: 1 }));
    // A store whose read lets two messages land first: one the snapshot includes, one it does not.
    const racing: Store = {
      ...store,
      async get(id) {
        await record(incoming('t', { sequence: 2 }));
        const snapshot = await store.get(id);
        await record(incoming('t', { sequence: 3 }));
        return snapshot;
      },
    };
    const stream = await openTestMessageStream({ store: racing, pubsub, correlationId: 't', queueLimit: 10 });
    await record(incoming('t', { sequence: 4, final: true }));
    expect(await take(stream, 10)).toEqual([1, 2, 3, 4]);
  });

  it('completes right after the replay when the test already finished', async () => {
    const { store, pubsub, record } = setup();
    await record(incoming('t', { sequence: 1 }));
    await record(incoming('t', { sequence: 2, status: 'FAILED' }));
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', queueLimit: 10 });
    expect(await take(stream, 10)).toEqual([1, 2]);
    expect(pubsub.listenerCount()).toBe(0);
  });

  it('skips messages at or below afterSequence, in the replay and live', async () => {
    const { store, pubsub, record } = setup();
    for (const seq of [1, 2, 3]) await record(incoming('t', { sequence: seq }));
    await record(incoming('t', { payload: 'unsequenced, replay' }));
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', afterSequence: 2, queueLimit: 10 });
    await record(incoming('t', { messageId: 'late', sequence: 2 }));
    await record(incoming('t', { payload: 'unsequenced, live' }));
    await record(incoming('t', { sequence: 9, final: true }));
    expect(await take(stream, 10)).toEqual([3, null, 9]);
  });

  it('completes when the final message is one that afterSequence skips', async () => {
    const { store, pubsub, record } = setup();
    await store.create({ correlationId: 't', input: null, owner: null });
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', afterSequence: 5, queueLimit: 10 });
    await record(incoming('t', { sequence: 3, final: true }));
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    expect(pubsub.listenerCount('t')).toBe(0);
  });

  it('rejects an unknown test with NOT_FOUND and leaves no listener behind', async () => {
    const { store, pubsub } = setup();
    await expect(openTestMessageStream({ store, pubsub, correlationId: 'nope', queueLimit: 10 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(pubsub.listenerCount()).toBe(0);
  });

  it('ends at once on return() while waiting, and removes its listener', async () => {
    const { store, pubsub } = setup();
    await store.create({ correlationId: 't', input: null, owner: null });
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', queueLimit: 10 });
    const pending = stream.next();
    expect(pubsub.listenerCount('t')).toBe(1);
    await stream.return?.();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(pubsub.listenerCount('t')).toBe(0);
  });

  it('closes a subscriber that falls more than queueLimit messages behind', async () => {
    const { store, pubsub, record } = setup();
    await store.create({ correlationId: 't', input: null, owner: null });
    const stream = await openTestMessageStream({ store, pubsub, correlationId: 't', queueLimit: 3 });
    for (let seq = 1; seq <= 5; seq++) await record(incoming('t', { sequence: seq }));
    const error = await stream.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('SUBSCRIBER_TOO_SLOW');
    expect(pubsub.listenerCount('t')).toBe(0);
  });
});
