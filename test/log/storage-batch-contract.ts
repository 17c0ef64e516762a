/**
 * The batch part of the storage contract (storage-contract.ts): what one `append` of many
 * messages, possibly of many tests, answers and stores.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { plainMessage, type AppendResult, type IncomingMessage, type TestMessage } from '../../src/domain/types.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { incoming, uniqueId, type StorageContext } from './storage-contract.js';

/** Registers the batch tests; `context.log()` is a fresh log for each test. */
export function describeBatchStorageContract(context: StorageContext): void {
  const { maxMessagesPerTest } = context;
  describe('append of a batch', () => {
    let log: ResultLog;
    beforeEach(async () => {
      log = await context.log();
    });
    /** Appends one message: a batch of one. */
    const appendOne = async (message: IncomingMessage): Promise<AppendResult> => (await log.append([message]))[0] as AppendResult;
    const outcomes = (results: readonly AppendResult[]) => results.map((r) => r.outcome);
    const sequences = async (id: string) => (await log.get(id))?.messages.map((m) => m.sequence);

    it('answers one result per message, in the order given, and stores them all', async () => {
      const id = uniqueId();
      await log.create({ correlationId: id, input: { name: 'run' }, owner: 'alice' });
      const batch = [incoming(id, { sequence: 2, payload: { b: 2 } }), incoming(id, { messageId: 'one', sequence: 1 }), incoming(id, { payload: 'loose' })];
      const before = Date.now();
      const results = await log.append(batch);
      expect(outcomes(results)).toEqual(['inserted', 'inserted', 'inserted']);
      expect(results.map((r) => r.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
      results.forEach((result, i) => {
        // Each in its place in the order they arrived, from 1.
        expect(plainMessage(result.message)).toEqual({ ...batch[i], receivedAt: result.message.receivedAt, arrival: i + 1 });
        expect(result.message.receivedAt).toBeGreaterThanOrEqual(before - 1000);
      });
      const read = await log.get(id);
      expect(read).toMatchObject({ correlationId: id, status: 'RUNNING', input: { name: 'run' }, owner: 'alice' });
      expect(read?.messages.map(plainMessage)).toEqual([results[1], results[0], results[2]].map((r) => plainMessage(r?.message as TestMessage)));
      expect(await log.append([])).toEqual([]);
    });

    it('reports a second copy of a key inside the batch as a duplicate of the first', async () => {
      const id = uniqueId();
      const results = await log.append([
        incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }),
        incoming(id, { messageId: 'y', sequence: 2 }),
        incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }),
        incoming(id, { messageId: 'y', sequence: 2, final: true }),
      ]);
      expect(outcomes(results)).toEqual(['inserted', 'inserted', 'duplicate', 'duplicate']);
      expect(results[2]?.message).toMatchObject({ key: 'm:x', receivedAt: results[0]?.message.receivedAt });
      expect(results[3]?.message).toMatchObject({ key: 'm:y', receivedAt: results[1]?.message.receivedAt });
      // The duplicate's `final` changed nothing.
      expect(results[3]?.status).toBe('RUNNING');
      const read = await log.get(id);
      expect(read?.status).toBe('RUNNING');
      expect(read?.messages.map((m) => m.key)).toEqual(['m:x', 'm:y']);
    });

    it('reports a redelivered batch as all duplicates and changes nothing', async () => {
      const a = uniqueId('a');
      const b = uniqueId('b');
      const batch = [incoming(a, { sequence: 1 }), incoming(b, { sequence: 1 }), incoming(a, { sequence: 2, final: true }), incoming(b, { payload: 'loose' })];
      const first = await log.append(batch);
      const records = () => Promise.all([a, b].map((id) => log.get(id)));
      const before = await records();
      const summaries = await log.getMany([a, b]);
      const again = await log.append(batch);
      expect(outcomes(first)).toEqual(['inserted', 'inserted', 'inserted', 'inserted']);
      expect(outcomes(again)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
      expect(again.map((r) => r.message.receivedAt)).toEqual(first.map((r) => r.message.receivedAt));
      expect(again.map((r) => r.status)).toEqual(['COMPLETED', 'RUNNING', 'COMPLETED', 'RUNNING']);
      expect(await records()).toEqual(before);
      expect(await log.getMany([a, b])).toEqual(summaries);
    });

    it('stores the messages of several tests in one batch, each in its own test', async () => {
      const known = uniqueId('known');
      const fresh = uniqueId('fresh');
      const other = uniqueId('other');
      const created = await log.create({ correlationId: known, input: { n: 1 }, owner: 'alice' });
      await new Promise((r) => setTimeout(r, 5));
      const results = await log.append([
        incoming(fresh, { sequence: 1 }),
        incoming(known, { sequence: 1 }),
        incoming(other, { sequence: 1, status: 'FAILED' }),
        incoming(fresh, { sequence: 2 }),
        incoming(known, { sequence: 2, final: true }),
        incoming(fresh, { sequence: 3 }),
      ]);
      expect(outcomes(results)).toEqual(Array(6).fill('inserted'));
      expect(results.map((r) => [r.message.correlationId, r.status])).toEqual([
        [fresh, 'RUNNING'],
        [known, 'RUNNING'],
        [other, 'FAILED'],
        [fresh, 'RUNNING'],
        [known, 'COMPLETED'],
        [fresh, 'RUNNING'],
      ]);
      const [k, f, o] = await Promise.all([known, fresh, other].map((id) => log.get(id)));
      expect(k).toMatchObject({ status: 'COMPLETED', input: { n: 1 }, owner: 'alice', createdAt: created.createdAt });
      expect(k?.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(k?.messages.map((m) => [m.correlationId, m.sequence])).toEqual([
        [known, 1],
        [known, 2],
      ]);
      expect(f).toMatchObject({ status: 'RUNNING', input: null, owner: null });
      expect(f?.messages.map((m) => [m.correlationId, m.sequence])).toEqual([
        [fresh, 1],
        [fresh, 2],
        [fresh, 3],
      ]);
      expect(o).toMatchObject({ status: 'FAILED', input: null, owner: null });
      expect(o?.messages).toHaveLength(1);
    });

    it('orders by sequence across the batch and the messages already stored', async () => {
      const id = uniqueId();
      await appendOne(incoming(id, { sequence: 1 }));
      await appendOne(incoming(id, { sequence: 5 }));
      const results = await log.append(
        [3, 7, 2, null, 6, 4].map((seq) => (seq === null ? incoming(id, { payload: 'unsequenced' }) : incoming(id, { sequence: seq }))),
      );
      expect(outcomes(results)).toEqual(Array(6).fill('inserted'));
      // Each message lands after the last one whose sequence is not greater, never before an
      // unsequenced one: exactly where six single appends would have put them.
      expect(await sequences(id)).toEqual([1, 2, 3, 5, 7, null, 4, 6]);
    });

    it('answers exactly what appending the messages one by one answers', async () => {
      const one = uniqueId('one');
      const many = uniqueId('many');
      const script = (id: string) => [
        incoming(id, { key: 'k4', sequence: 4 }),
        incoming(id, { key: 'k2', sequence: 2 }),
        incoming(id, { key: 'k4', sequence: 4 }),
        incoming(id, { key: 'u1', payload: 'unsequenced' }),
        incoming(id, { key: 'k1', sequence: 1 }),
        incoming(id, { key: 'k9', sequence: 9, status: 'COMPLETED' }),
        incoming(id, { key: 'k3', sequence: 3, status: 'FAILED' }),
        incoming(id, { key: 'k2', sequence: 2 }),
        incoming(id, { key: 'k8', sequence: 8, final: true }),
      ];
      const single: AppendResult[] = [];
      for (const message of script(one)) single.push(await appendOne(message));
      const batched = await log.append(script(many));
      const shape = (results: AppendResult[]) => results.map((r) => [r.outcome, r.status, r.message.key]);
      expect(shape(batched)).toEqual(shape(single));
      const [a, b] = await Promise.all([one, many].map((id) => log.get(id)));
      expect(b?.status).toBe(a?.status);
      expect(b?.messages.map((m) => m.key)).toEqual(a?.messages.map((m) => m.key));
    });

    it('refuses messages once the per-test maximum is reached inside a batch', async () => {
      const id = uniqueId('cap');
      const other = uniqueId('other');
      // Fill the test to two below its maximum, in batches of a realistic size.
      for (let stored = 0; stored < maxMessagesPerTest - 2; stored += 500) {
        const size = Math.min(500, maxMessagesPerTest - 2 - stored);
        const filled = await log.append(Array.from({ length: size }, (_, i) => incoming(id, { key: `fill-${stored + i}` })));
        expect(filled.every((r) => r.outcome === 'inserted')).toBe(true);
      }
      const results = await log.append([
        incoming(id, { key: 'a', sequence: 1 }),
        incoming(other, { key: 'a', sequence: 1 }),
        incoming(id, { key: 'b', sequence: 2 }),
        incoming(id, { key: 'a', sequence: 1 }),
        incoming(id, { key: 'c', sequence: 3, final: true }),
        incoming(id, { key: 'd', sequence: 4 }),
      ]);
      expect(outcomes(results)).toEqual(['inserted', 'inserted', 'inserted', 'duplicate', 'over-limit', 'over-limit']);
      // The refused final message did not finish the test.
      expect(results.map((r) => r.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING', 'RUNNING', 'RUNNING', 'RUNNING']);
      const read = await log.get(id);
      expect(read?.status).toBe('RUNNING');
      expect(read?.messages).toHaveLength(maxMessagesPerTest);
      expect(read?.messages.slice(-2).map((m) => m.key)).toEqual(['a', 'b']);
      expect((await log.get(other))?.messages).toHaveLength(1);
    });

    it('moves the status message by message and keeps the first terminal status', async () => {
      const failed = uniqueId('failed');
      const completed = uniqueId('completed');
      await log.create({ correlationId: failed, input: null, owner: null });
      const results = await log.append([
        incoming(failed, { sequence: 1 }),
        incoming(completed, { sequence: 1, status: 'RUNNING' }),
        incoming(failed, { sequence: 2, status: 'FAILED' }),
        incoming(completed, { sequence: 2, final: true }),
        incoming(failed, { sequence: 3, status: 'COMPLETED' }),
        incoming(completed, { sequence: 3, status: 'FAILED' }),
        incoming(failed, { sequence: 4, final: true }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['RUNNING', 'RUNNING', 'FAILED', 'COMPLETED', 'FAILED', 'COMPLETED', 'FAILED']);
      const [f, c] = await Promise.all([failed, completed].map((id) => log.get(id)));
      expect(f?.status).toBe('FAILED');
      expect(f?.messages).toHaveLength(4);
      expect(c?.status).toBe('COMPLETED');
      expect(c?.messages).toHaveLength(3);
    });
  });
}
