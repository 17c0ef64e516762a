import { describe, expect, it } from 'vitest';
import type { AppendResult, IncomingMessage, TestMessageEvent } from '../../src/domain/types.js';
import { ServiceError } from '../../src/errors.js';
import { createMemoryPubSub } from '../../src/pubsub/memory-pubsub.js';
import type { PubSub } from '../../src/pubsub/pubsub.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import { incoming } from '../store/store-contract.js';

/** A real memory store that counts the calls that reach it. */
function setup(options: { maxMessagesPerTest?: number; wrap?: (store: Store) => Partial<Store>; pubsub?: PubSub } = {}) {
  const memory = createMemoryStore({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: options.maxMessagesPerTest ?? 1000 });
  const batches: Array<readonly IncomingMessage[]> = [];
  let singles = 0;
  const store: Store = {
    ...memory,
    append: (message) => {
      singles += 1;
      return memory.append(message);
    },
    appendMany: (messages) => {
      batches.push(messages);
      return memory.appendMany(messages);
    },
  };
  const pubsub = options.pubsub ?? createMemoryPubSub();
  const record = createResultRecorder({ store: { ...store, ...options.wrap?.(store) }, pubsub });
  return { memory, pubsub, record, batches, singles: () => singles };
}

/** Collects every event published for the given tests, in publish order. */
async function listen(pubsub: PubSub, ids: string[]): Promise<TestMessageEvent[]> {
  const events: TestMessageEvent[] = [];
  for (const id of ids) await pubsub.subscribe(id, (event) => events.push(event));
  return events;
}

describe('createResultRecorder', () => {
  it('stores a chunk with one appendMany, and answers each message its outcome in order', async () => {
    const { memory, record, batches, singles } = setup({ maxMessagesPerTest: 3 });
    const messages = [
      incoming('a', { sequence: 1 }),
      incoming('b', { sequence: 1 }),
      incoming('a', { sequence: 2 }),
      incoming('a', { sequence: 1 }),
      incoming('a', { sequence: 3, final: true }),
      incoming('a', { sequence: 4 }),
    ];
    expect(await record(messages)).toEqual(['inserted', 'inserted', 'inserted', 'duplicate', 'inserted', 'over-limit']);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual(messages);
    expect(singles()).toBe(0);
    const [a, b] = await memory.getMany(['a', 'b']);
    expect(a?.messages.map((m) => m.sequence)).toEqual([1, 2, 3]);
    expect(a?.status).toBe('COMPLETED');
    expect(b?.messages).toHaveLength(1);
  });

  it('stores separate chunks in separate calls, and an empty chunk in none', async () => {
    const { record, batches } = setup();
    expect(await record([incoming('a', { sequence: 1 })])).toEqual(['inserted']);
    expect(await record([incoming('a', { sequence: 1 })])).toEqual(['duplicate']);
    expect(await record([])).toEqual([]);
    expect(batches.map((batch) => batch.length)).toEqual([1, 1]);
  });

  it('hands a chunk of any size to the store whole, in order', async () => {
    const { memory, record, batches } = setup({ maxMessagesPerTest: 2000 });
    const messages = Array.from({ length: 1200 }, (_, i) => incoming('big', { sequence: i }));
    const outcomes = await record(messages);
    expect(outcomes).toHaveLength(1200);
    expect(outcomes.every((outcome) => outcome === 'inserted')).toBe(true);
    expect(batches.map((batch) => batch.length)).toEqual([1200]);
    expect(batches.flat()).toEqual(messages);
    expect((await memory.get('big'))?.messages).toHaveLength(1200);
  });

  it('publishes each inserted message once, in chunk order, before answering', async () => {
    const { pubsub, record } = setup({ maxMessagesPerTest: 2 });
    const events = await listen(pubsub, ['a', 'b']);
    const messages = [
      incoming('a', { sequence: 2 }),
      incoming('b', { sequence: 1 }),
      incoming('a', { sequence: 1 }),
      incoming('a', { sequence: 2 }),
      incoming('a', { sequence: 3 }),
      incoming('b', { sequence: 2, status: 'FAILED' }),
    ];
    const answered = record(messages).then((outcomes) => ({ outcomes, seen: events.length }));
    const { outcomes, seen } = await answered;
    expect(outcomes).toEqual(['inserted', 'inserted', 'inserted', 'duplicate', 'over-limit', 'inserted']);
    expect(events.map((e) => [e.message.correlationId, e.message.sequence, e.status])).toEqual([
      ['a', 2, 'RUNNING'],
      ['b', 1, 'RUNNING'],
      ['a', 1, 'RUNNING'],
      ['b', 2, 'FAILED'],
    ]);
    // The chunk was answered only after all its pushes.
    expect(seen).toBe(4);
    // A redelivery is stored and pushed no more.
    expect(await record(messages)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'over-limit', 'duplicate']);
    expect(events).toHaveLength(4);
  });

  it('does not publish again what the store already published', async () => {
    const { pubsub, record } = setup({
      // A store that announces its messages itself (as the Redis store does) for test 'a' only.
      wrap: (store) => ({
        appendMany: async (messages) => (await store.appendMany(messages)).map((r): AppendResult => (r.message.correlationId === 'a' ? { ...r, published: true } : r)),
      }),
    });
    const events = await listen(pubsub, ['a', 'b']);
    await record([incoming('a', { sequence: 1 }), incoming('b', { sequence: 1 }), incoming('a', { sequence: 2 })]);
    expect(events.map((e) => [e.message.correlationId, e.message.sequence])).toEqual([['b', 1]]);
  });

  it('rejects the chunk with the store error, and stores it when handed over again', async () => {
    const failure = new ServiceError('STORE_UNAVAILABLE', 'The state store is unavailable.');
    let down = true;
    const { memory, pubsub, record, batches } = setup({
      wrap: (store) => ({ appendMany: (messages) => (down ? Promise.reject(failure) : store.appendMany(messages)) }),
    });
    const events = await listen(pubsub, ['a', 'b']);
    const messages = [incoming('a', { sequence: 1 }), incoming('b', { sequence: 1 }), incoming('a', { sequence: 2 })];
    await expect(record(messages)).rejects.toBe(failure);
    expect(events).toHaveLength(0);
    down = false;
    expect(await record(messages)).toEqual(['inserted', 'inserted', 'inserted']);
    expect(events.map((e) => [e.message.correlationId, e.message.sequence])).toEqual([['a', 1], ['b', 1], ['a', 2]]);
    expect((await memory.get('a'))?.messages).toHaveLength(2);
    expect(batches).toHaveLength(1);
  });

  it('fails the chunk whose push failed, after pushing the others in order', async () => {
    const memoryPubSub = createMemoryPubSub();
    const pushFailure = new Error('push refused');
    const published: string[] = [];
    const pubsub: PubSub = {
      ...memoryPubSub,
      publish: async (event) => {
        if (event.message.correlationId === 'b') throw pushFailure;
        published.push(`${event.message.correlationId}/${event.message.sequence}`);
      },
    };
    const { record, memory } = setup({ pubsub });
    await expect(record([incoming('a', { sequence: 1 }), incoming('b', { sequence: 1 }), incoming('a', { sequence: 2 })])).rejects.toBe(pushFailure);
    expect(published).toEqual(['a/1', 'a/2']);
    // Stored all the same: the redelivered chunk finds them and pushes nothing twice.
    expect((await memory.get('a'))?.messages).toHaveLength(2);
  });
});
