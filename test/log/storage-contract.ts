/**
 * The storage half of the result-log contract (result-log-contract.ts): create, reads, ordering,
 * deduplication, bounds and status, for every implementation.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { plainMessage, type AppendResult, type IncomingMessage, type TestMessage } from '../../src/domain/types.js';
import type { ResultLog } from '../../src/log/result-log.js';

let counter = 0;
/** A correlation id no other test uses (stores may be shared, e.g. one Redis). */
export const uniqueId = (label = 't') => `${label}-${process.pid}-${Date.now()}-${++counter}`;

/** A decoded message with defaults. */
export function incoming(correlationId: string, fields: Partial<IncomingMessage> = {}): IncomingMessage {
  const sequence = fields.sequence ?? null;
  const messageId = fields.messageId ?? null;
  return {
    correlationId,
    key: fields.key ?? (messageId !== null ? `m:${messageId}` : sequence !== null ? `s:${sequence}` : `o:results/0/${++counter}`),
    messageId,
    sequence,
    status: fields.status ?? null,
    final: fields.final ?? false,
    payload: fields.payload ?? { n: sequence },
    producedAt: fields.producedAt ?? null,
  };
}

/** The log under test and its bounds. */
export interface StorageContext {
  readonly log: () => ResultLog;
  readonly maxMessagesPerTest: number;
  /** A fresh log whose tests expire after `ttlSeconds` without writes. */
  readonly ttl: (ttlSeconds: number) => ResultLog;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers the storage tests; `context.log()` is a fresh log for each test. */
export function describeStorageContract(context: StorageContext): void {
  const { maxMessagesPerTest } = context;
  describe('storage', () => {
    let log: ResultLog;
    beforeEach(() => {
      log = context.log();
    });
    /** Appends one message: a batch of one. */
    const appendOne = async (message: IncomingMessage): Promise<AppendResult> => (await log.append([message]))[0] as AppendResult;

    it('expires a test after the TTL without writes, and a write refreshes it', async () => {
      const short = context.ttl(1);
      const a = uniqueId('ttl-a');
      const b = uniqueId('ttl-b');
      await short.create({ correlationId: a, input: null, owner: null });
      await short.create({ correlationId: b, input: null, owner: null });
      await short.append([incoming(b, { sequence: 1 })]);
      await sleep(600);
      await short.append([incoming(b, { sequence: 2 })]);
      await sleep(600);
      expect(await short.get(a)).toBeNull();
      expect((await short.get(b))?.messages.map((m) => m.sequence)).toEqual([1, 2]);
      await sleep(1100);
      expect(await short.getMany([a, b])).toEqual([null, null]);
    });

    it('creates a pending test that reads back at once with no messages', async () => {
      const id = uniqueId();
      const created = await log.create({ correlationId: id, input: { name: 'run' }, owner: 'alice' });
      expect(created).toMatchObject({ correlationId: id, status: 'PENDING', input: { name: 'run' }, owner: 'alice', messages: [] });
      const read = await log.get(id);
      expect(read).toMatchObject({ correlationId: id, status: 'PENDING', input: { name: 'run' }, owner: 'alice', messages: [] });
      expect(read?.createdAt).toBeTypeOf('number');
    });

    it('keeps the existing record when create is called again', async () => {
      const id = uniqueId();
      await log.create({ correlationId: id, input: { first: true }, owner: "alice" });
      await appendOne(incoming(id, { sequence: 1 }));
      const again = await log.create({ correlationId: id, input: { second: true }, owner: "mallory" });
      expect(again.input).toEqual({ first: true });
      expect(again.owner).toBe('alice');
      expect(again.messages).toHaveLength(1);
    });

    it('returns null for an unknown id, and getMany answers in the order asked', async () => {
      const a = uniqueId('a');
      const b = uniqueId('b');
      await log.create({ correlationId: a, input: null, owner: null });
      await log.create({ correlationId: b, input: null, owner: null });
      expect(await log.get(uniqueId('missing'))).toBeNull();
      const many = await log.getMany([b, uniqueId('missing'), a, b]);
      expect(many.map((r) => r?.correlationId ?? null)).toEqual([b, null, a, b]);
      expect(await log.getMany([])).toEqual([]);
    });

    it('creates the record when a message arrives for an unknown test', async () => {
      const id = uniqueId();
      const result = await appendOne(incoming(id, { sequence: 1 }));
      expect(result.outcome).toBe('inserted');
      const read = await log.get(id);
      expect(read).toMatchObject({ correlationId: id, status: 'RUNNING', input: null, owner: null });
      expect(read?.messages).toHaveLength(1);
    });

    it('stores a redelivered message once and reports it as a duplicate', async () => {
      const id = uniqueId();
      await log.create({ correlationId: id, input: null, owner: null });
      const first = await appendOne(incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }));
      const second = await appendOne(incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }));
      expect(first.outcome).toBe('inserted');
      expect(second.outcome).toBe('duplicate');
      expect(second.message.receivedAt).toBe(first.message.receivedAt);
      expect((await log.get(id))?.messages).toHaveLength(1);
    });

    it('deduplicates by key only: the same sequence under another message id is a new message', async () => {
      const id = uniqueId();
      await appendOne(incoming(id, { messageId: 'a', sequence: 1 }));
      const other = await appendOne(incoming(id, { messageId: 'b', sequence: 1 }));
      expect(other.outcome).toBe('inserted');
      expect((await log.get(id))?.messages.map((m) => m.messageId)).toEqual(['a', 'b']);
    });

    it('orders messages by sequence where given, else by arrival', async () => {
      const id = uniqueId();
      for (const seq of [3, 1, 2]) await appendOne(incoming(id, { sequence: seq }));
      await appendOne(incoming(id, { payload: 'unsequenced' }));
      await appendOne(incoming(id, { sequence: 5 }));
      await appendOne(incoming(id, { sequence: 4 }));
      const read = await log.get(id);
      expect(read?.messages.map((m) => m.sequence)).toEqual([1, 2, 3, null, 4, 5]);
    });

    it('moves the status from pending to running to the terminal status, and keeps it terminal', async () => {
      const id = uniqueId();
      await log.create({ correlationId: id, input: null, owner: null });
      expect((await appendOne(incoming(id, { sequence: 1 }))).status).toBe('RUNNING');
      expect((await appendOne(incoming(id, { sequence: 2, final: true, status: 'FAILED' }))).status).toBe('FAILED');
      expect((await appendOne(incoming(id, { sequence: 3, status: 'COMPLETED' }))).status).toBe('FAILED');
      const read = await log.get(id);
      expect(read?.status).toBe('FAILED');
      expect(read?.messages).toHaveLength(3);
    });

    it('treats final without a status as completed', async () => {
      const id = uniqueId();
      expect((await appendOne(incoming(id, { sequence: 1, final: true }))).status).toBe('COMPLETED');
    });

    it('keeps payloads and message fields as given and stamps receivedAt', async () => {
      const id = uniqueId();
      const before = Date.now();
      const { message } = await appendOne(incoming(id, { messageId: 'm1', sequence: 7, status: 'RUNNING', payload: { deep: [1, { x: 'y' }] }, producedAt: 1_700_000_000_000 }));
      expect(message).toMatchObject({ correlationId: id, key: 'm:m1', messageId: 'm1', sequence: 7, status: 'RUNNING', final: false, payload: { deep: [1, { x: 'y' }] }, producedAt: 1_700_000_000_000 });
      expect(message.receivedAt).toBeGreaterThanOrEqual(before - 1000);
      const [stored] = (await log.get(id))?.messages ?? [];
      expect(stored).toEqual(message);
    });

    it('keeps the payload text the decoder took from the record, reading back as the payload itself', async () => {
      const id = uniqueId();
      // The text as a producer may have written it: escapes and a trailing zero that JSON.stringify would not write.
      const payloadJson = String.raw`{"s":"}{\"\u00e9","n":[1.50,-2],"o":{}}`;
      const payload = JSON.parse(payloadJson) as unknown;
      const results = await log.append([
        { ...incoming(id, { sequence: 1, payload }), payloadJson },
        incoming(id, { sequence: 2, payload }),
      ]);
      const [first, second] = (await log.get(id))?.messages ?? [];
      expect(first?.payload).toEqual({ s: '}{"é', n: [1.5, -2], o: {} });
      expect(JSON.stringify(first?.payload)).toBe(JSON.stringify(second?.payload));
      // The text is the store's business: it is not a field of the message handed out.
      const fieldsOf = (message: unknown) => Object.keys(JSON.parse(JSON.stringify(message)) as object);
      expect(fieldsOf(first)).toEqual(fieldsOf(second));
      expect(fieldsOf(first)).not.toContain('payloadJson');
      expect(fieldsOf(results[0]?.message)).not.toContain('payloadJson');
      expect(results[0]?.message.payload).toEqual(first?.payload);
    });

    it('bumps updatedAt on append', async () => {
      const id = uniqueId();
      const created = await log.create({ correlationId: id, input: null, owner: null });
      await new Promise((r) => setTimeout(r, 5));
      await appendOne(incoming(id, { sequence: 1 }));
      const read = await log.get(id);
      expect(read?.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(read?.createdAt).toBe(created.createdAt);
    });

    it('returns snapshots that later appends do not change', async () => {
      const id = uniqueId();
      await appendOne(incoming(id, { sequence: 1 }));
      const snapshot = await log.get(id);
      await appendOne(incoming(id, { sequence: 2 }));
      expect(snapshot?.messages).toHaveLength(1);
    });

    it('removes a test', async () => {
      const id = uniqueId();
      await log.create({ correlationId: id, input: null, owner: null });
      expect(await log.remove(id)).toBe(true);
      expect(await log.get(id)).toBeNull();
      expect(await log.remove(id)).toBe(false);
    });

    describe('append of a batch', () => {
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
          expect(plainMessage(result.message)).toEqual({ ...batch[i], receivedAt: result.message.receivedAt });
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
        const before = await log.getMany([a, b]);
        const again = await log.append(batch);
        expect(outcomes(first)).toEqual(['inserted', 'inserted', 'inserted', 'inserted']);
        expect(outcomes(again)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
        expect(again.map((r) => r.message.receivedAt)).toEqual(first.map((r) => r.message.receivedAt));
        expect(again.map((r) => r.status)).toEqual(['COMPLETED', 'RUNNING', 'COMPLETED', 'RUNNING']);
        expect(await log.getMany([a, b])).toEqual(before);
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
        const [k, f, o] = await log.getMany([known, fresh, other]);
        expect(k).toMatchObject({ status: 'COMPLETED', input: { n: 1 }, owner: 'alice', createdAt: created.createdAt });
        expect(k?.updatedAt).toBeGreaterThan(created.updatedAt);
        expect(k?.messages.map((m) => [m.correlationId, m.sequence])).toEqual([[known, 1], [known, 2]]);
        expect(f).toMatchObject({ status: 'RUNNING', input: null, owner: null });
        expect(f?.messages.map((m) => [m.correlationId, m.sequence])).toEqual([[fresh, 1], [fresh, 2], [fresh, 3]]);
        expect(o).toMatchObject({ status: 'FAILED', input: null, owner: null });
        expect(o?.messages).toHaveLength(1);
      });

      it('orders by sequence across the batch and the messages already stored', async () => {
        const id = uniqueId();
        await appendOne(incoming(id, { sequence: 1 }));
        await appendOne(incoming(id, { sequence: 5 }));
        const results = await log.append([3, 7, 2, null, 6, 4].map((seq) => (seq === null ? incoming(id, { payload: 'unsequenced' }) : incoming(id, { sequence: seq }))));
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
        const [a, b] = await log.getMany([one, many]);
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
        const [f, c] = await log.getMany([failed, completed]);
        expect(f?.status).toBe('FAILED');
        expect(f?.messages).toHaveLength(4);
        expect(c?.status).toBe('COMPLETED');
        expect(c?.messages).toHaveLength(3);
      });
    });

    it('reports itself usable', async () => {
      await expect(log.check()).resolves.toBeUndefined();
    });
  });
}
