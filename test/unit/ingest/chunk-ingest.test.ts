/**
 * One chunk of records, apart from the broker: decoded and counted once, malformed records
 * dead-lettered in order, the rest stored with one call, however often storing is retried.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../../src/domain/types.js';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { createChunkIngest } from '../../../src/ingest/chunk-ingest.js';
import type { ConsumerStats, DeadLetterSink, ResultEventHandler } from '../../../src/ingest/consumer.js';
import { createSilentLogger } from '../../../src/base/logger.js';
import { createResultRecorder } from '../../../src/results/record-result.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';

let offset = 0;
const record = (value: string | object): BrokerRecord => ({
  topic: 'results',
  partition: 1,
  offset: String(offset++),
  key: null,
  value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  headers: {},
});

function setup(options: { deadLetter?: DeadLetterSink; maxMessagesPerTest?: number; onEvents?: (real: ResultEventHandler) => ResultEventHandler } = {}) {
  const store = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: options.maxMessagesPerTest ?? 100 });
  const real = createResultRecorder({ log: store });
  const calls: Array<readonly IncomingMessage[]> = [];
  const inner = options.onEvents?.(real) ?? real;
  const onEvents: ResultEventHandler = (messages) => {
    calls.push(messages);
    return inner(messages);
  };
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  const chunks = createChunkIngest({ onEvents, deadLetter: options.deadLetter, stats, log: createSilentLogger() });
  return { store, chunks, stats, calls };
}

/**
 * A chunk ingest whose state answers its first call only once `answerFirst` is called, and every
 * later call as `later` does; each call is counted.
 */
function answeringFirstLate(later: () => Promise<void>) {
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  let answerFirst!: () => void;
  const first = new Promise<void>((resolve) => (answerFirst = resolve));
  let calls = 0;
  const chunks = createChunkIngest({
    onEvents: async (messages) => {
      calls += 1;
      await (calls === 1 ? first : later());
      return messages.map(() => 'inserted' as const);
    },
    stats,
    storeCallLimitMs: 50,
    log: createSilentLogger(),
  });
  return { chunks, stats, answerFirst, calls: () => calls };
}

describe('createChunkIngest', () => {
  it('stores the well-formed records of a chunk with one call, in order, and counts each outcome', async () => {
    const { store, chunks, stats, calls } = setup({ maxMessagesPerTest: 2 });
    const chunk = chunks.decode([
      record({ correlationId: 'a', sequence: 1 }),
      record('not json'),
      record({ correlationId: 'a', sequence: 2 }),
      record({ correlationId: 'a', sequence: 1 }),
      record({ correlationId: 'a', sequence: 3 }),
    ]);
    await chunks.store(chunk);
    await chunk.deadLettered;
    expect(calls).toHaveLength(1);
    expect(calls[0]?.map((m) => m.sequence)).toEqual([1, 2, 1, 3]);
    expect(stats).toEqual({ consumed: 5, stored: 2, duplicates: 1, malformed: 1, deadLettered: 0, overLimit: 1 });
    expect((await store.get('a'))?.messages.map((m) => m.sequence)).toEqual([1, 2]);
  });

  it('sends malformed records to the dead-letter sink in order, and settles only once they are sent', async () => {
    const sent: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { chunks, stats } = setup({
      deadLetter: async (r, reason) => {
        await gate;
        sent.push(`${r.offset}:${reason}`);
      },
    });
    const records = [record('{oops'), record({ correlationId: 'b', sequence: 1 }), record([1])];
    const chunk = chunks.decode(records);
    await chunks.store(chunk);
    let done = false;
    void chunk.deadLettered.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toBe(false);
    release();
    await chunk.deadLettered;
    expect(sent).toEqual([`${records[0]?.offset}:value is not JSON`, `${records[2]?.offset}:value is not a JSON object`]);
    expect(stats.malformed).toBe(2);
    expect(stats.deadLettered).toBe(2);
  });

  it('rejects deadLettered when a copy could not be sent', async () => {
    const failure = new Error('dead-letter topic unreachable');
    const { chunks, stats } = setup({ deadLetter: () => Promise.reject(failure) });
    const chunk = chunks.decode([record('{oops')]);
    await expect(chunk.deadLettered).rejects.toBe(failure);
    expect(stats.deadLettered).toBe(0);
  });

  it('decodes and counts a chunk once however often storing it is retried', async () => {
    let failures = 2;
    const failure = new Error('store down');
    const { chunks, stats, calls } = setup({ onEvents: (real) => (messages) => (failures-- > 0 ? Promise.reject(failure) : real(messages)) });
    const chunk = chunks.decode([record({ correlationId: 'c', sequence: 1 }), record('bad'), record({ correlationId: 'c', sequence: 2 })]);
    await expect(chunks.store(chunk)).rejects.toBe(failure);
    await expect(chunks.store(chunk)).rejects.toBe(failure);
    await chunks.store(chunk);
    expect(calls).toHaveLength(3);
    expect(stats).toEqual({ consumed: 3, stored: 2, duplicates: 0, malformed: 1, deadLettered: 0, overLimit: 0 });
  });

  it('makes no call for a chunk of malformed records only', async () => {
    const { chunks, calls, stats } = setup();
    await chunks.store(chunks.decode([record(''), record('[]')]));
    expect(calls).toHaveLength(0);
    expect(stats.malformed).toBe(2);
  });

  it('refuses an answer that does not have one outcome per message', async () => {
    const { chunks } = setup({ onEvents: () => async () => ['inserted'] });
    const chunk = chunks.decode([record({ correlationId: 'd', sequence: 1 }), record({ correlationId: 'd', sequence: 2 })]);
    await expect(chunks.store(chunk)).rejects.toThrow('1 outcomes for 2 messages');
  });

  it('refuses a record marked over its shape bounds without decoding it, counts it oversized, and dead-letters a bounded copy', async () => {
    const store = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: 100 });
    const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
    const sent: Array<[BrokerRecord, string]> = [];
    const chunks = createChunkIngest({
      onEvents: createResultRecorder({ log: store }),
      deadLetter: async (dead, reason) => void sent.push([dead, reason]),
      stats,
      maxRecordBytes: 64,
      log: createSilentLogger(),
    });
    const refused = (value: object): BrokerRecord => ({ ...record(value), refused: 'record has 9000 headers, more than 64' });
    // Well-formed values: only the mark refuses them. The second one's value is over the bound, and is not copied.
    const records = [
      refused({ correlationId: 'r', sequence: 1 }),
      refused({ correlationId: 'r', sequence: 2, pad: 'x'.repeat(100) }),
      record({ correlationId: 'r', sequence: 3 }),
    ];
    const chunk = chunks.decode(records);
    await chunks.store(chunk);
    await chunk.deadLettered;
    expect(stats).toEqual({ consumed: 3, stored: 1, duplicates: 0, malformed: 2, deadLettered: 2, overLimit: 0, oversized: 2 });
    const reason = 'record has 9000 headers, more than 64';
    expect(sent).toEqual([
      [records[0], reason],
      [{ ...records[1], value: null }, reason],
    ]);
    expect((await store.get('r'))?.messages.map((m) => m.sequence)).toEqual([3]);
  });

  it('takes a call the state leaves unanswered past its limit for STORE_UNAVAILABLE, and never counts its late answer', async () => {
    const { chunks, stats, answerFirst } = answeringFirstLate(() => Promise.resolve());
    const chunk = chunks.decode([record({ correlationId: 'slow', sequence: 1 })]);
    await expect(chunks.store(chunk)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(stats.stored).toBe(0);
    await chunks.store(chunk);
    expect(stats.stored).toBe(1);
    // The first call answers after all: given up on, it is not counted again.
    answerFirst();
    await new Promise((resolve) => setImmediate(resolve));
    expect(stats).toMatchObject({ consumed: 1, stored: 1, duplicates: 0 });
  });

  it('still awaits a call given up on beside the next, and leaves a chunk at most two calls unanswered', async () => {
    // Every call after the first never answers.
    const { chunks, stats, answerFirst, calls } = answeringFirstLate(() => new Promise<never>(() => undefined));
    const chunk = chunks.decode([record({ correlationId: 'hung', sequence: 1 })]);
    await expect(chunks.store(chunk)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(chunks.store(chunk)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(chunks.store(chunk)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // Three attempts, two calls: the third waited on the two unanswered ones.
    expect(calls()).toBe(2);
    expect(stats.stored).toBe(0);
    // The first call answers while a fourth attempt waits: its answer is the one counted.
    const fourth = chunks.store(chunk);
    answerFirst();
    await fourth;
    expect(calls()).toBe(2);
    expect(stats).toMatchObject({ consumed: 1, stored: 1, duplicates: 0 });
  });
});
