import { describe, expect, it } from 'vitest';
import type { IncomingMessage, TestMessage } from '../../../src/domain/types.js';
import { ServiceError } from '../../../src/base/errors.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';
import type { ResultLog } from '../../../src/log/result-log.js';
import { createResultRecorder } from '../../../src/results/record-result.js';
import { incoming } from '../../log/storage-contract.js';

/** A real memory log that counts the calls that reach it. */
function setup(options: { maxMessagesPerTest?: number; wrap?: (log: ResultLog) => Partial<ResultLog> } = {}) {
  const memory = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: options.maxMessagesPerTest ?? 1000 });
  const batches: Array<readonly IncomingMessage[]> = [];
  const log: ResultLog = {
    ...memory,
    append: (messages) => {
      batches.push(messages);
      return memory.append(messages);
    },
  };
  const record = createResultRecorder({ log: { ...log, ...options.wrap?.(log) } });
  return { memory, record, batches };
}

/** Follows the given tests; `events` fills with what the followers receive, in order. */
async function listen(log: ResultLog, ids: string[]): Promise<Array<[string, number | null]>> {
  const events: Array<[string, number | null]> = [];
  for (const id of ids) {
    await log.create({ correlationId: id, input: null, owner: null });
    const follower = await log.follow(id, { queueLimit: 100 });
    void (async () => {
      for (let next = await follower.next(); next.done !== true; next = await follower.next())
        events.push([(next.value as TestMessage).correlationId, next.value.sequence]);
    })();
  }
  return events;
}

describe('createResultRecorder', () => {
  it('stores a chunk with one appendMany, and answers each message its outcome in order', async () => {
    const { memory, record, batches } = setup({ maxMessagesPerTest: 3 });
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
    const [a, b] = await Promise.all(['a', 'b'].map((id) => memory.get(id)));
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

  it('has each inserted message delivered once, in chunk order', async () => {
    const { memory, record } = setup({ maxMessagesPerTest: 2 });
    const events = await listen(memory, ['a', 'b']);
    const messages = [
      incoming('a', { sequence: 2 }),
      incoming('b', { sequence: 1 }),
      incoming('a', { sequence: 1 }),
      incoming('a', { sequence: 2 }),
      incoming('a', { sequence: 3 }),
      incoming('b', { sequence: 2, status: 'FAILED' }),
    ];
    const outcomes = await record(messages);
    expect(outcomes).toEqual(['inserted', 'inserted', 'inserted', 'duplicate', 'over-limit', 'inserted']);
    // (That the memory log hands them over before it answers is its own test.)
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([
      ['a', 2],
      ['b', 1],
      ['a', 1],
      ['b', 2],
    ]);
    // A redelivery is stored and delivered no more.
    expect(await record(messages)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'over-limit', 'duplicate']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toHaveLength(4);
  });

  it("rejects the chunk with the log's error, and stores it when handed over again", async () => {
    const failure = new ServiceError('STORE_UNAVAILABLE', 'The state store is unavailable.');
    let down = true;
    const { memory, record, batches } = setup({
      wrap: (log) => ({ append: (messages) => (down ? Promise.reject(failure) : log.append(messages)) }),
    });
    const events = await listen(memory, ['a', 'b']);
    const messages = [incoming('a', { sequence: 1 }), incoming('b', { sequence: 1 }), incoming('a', { sequence: 2 })];
    await expect(record(messages)).rejects.toBe(failure);
    expect(events).toHaveLength(0);
    down = false;
    expect(await record(messages)).toEqual(['inserted', 'inserted', 'inserted']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([
      ['a', 1],
      ['b', 1],
      ['a', 2],
    ]);
    expect((await memory.get('a'))?.messages).toHaveLength(2);
    expect(batches).toHaveLength(1);
  });
});
