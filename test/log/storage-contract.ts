/**
 * The storage half of the result-log contract (result-log-contract.ts): create, reads, ordering,
 * deduplication, bounds and status, for every implementation.
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppendResult, IncomingMessage } from '../../src/domain/types.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { onTimeline } from '../support/timeline.js';

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
/** A new test of `owner` in `log` with `messages` appended one by one (each its own arrival); its id. */
export async function storedTest(log: ResultLog, label: string, messages: ReadonlyArray<Partial<IncomingMessage>> = [], owner = 'tester'): Promise<string> {
  const id = uniqueId(label);
  await log.create({ correlationId: id, input: null, owner });
  for (const fields of messages) await log.append([incoming(id, fields)]);
  return id;
}

export interface StorageContext {
  readonly log: () => Promise<ResultLog>;
  readonly maxMessagesPerTest: number;
  /** A fresh log whose tests expire after `ttlSeconds` without writes. */
  readonly ttl: (ttlSeconds: number) => Promise<ResultLog>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers the storage tests; `context.log()` is a fresh log for each test. */
export function describeStorageContract(context: StorageContext): void {
  describe('storage', () => {
    let log: ResultLog;
    beforeEach(async () => {
      log = await context.log();
    });
    /** Appends one message: a batch of one. */
    const appendOne = async (message: IncomingMessage): Promise<AppendResult> => (await log.append([message]))[0] as AppendResult;

    it('expires a test after the TTL without writes, and a write refreshes it', async () => {
      const short = await context.ttl(1);
      await onTimeline(async (timeline) => {
        const a = uniqueId('ttl-a');
        const b = uniqueId('ttl-b');
        await short.create({ correlationId: a, input: null, owner: null });
        await short.create({ correlationId: b, input: null, owner: null });
        await short.append([incoming(b, { sequence: 1 })]);
        await sleep(600);
        const refreshed = timeline.now();
        await short.append([incoming(b, { sequence: 2 })]);
        await sleep(600);
        const kept = await short.get(b);
        // b is there only if this read ended within the TTL of the refresh; a is gone however late.
        timeline.within(refreshed, 1000, 'the refresh and the read after it');
        expect(kept?.messages.map((m) => m.sequence)).toEqual([1, 2]);
        expect(await short.get(a)).toBeNull();
        await sleep(1100);
        expect(await short.getMany([a, b])).toEqual([null, null]);
      });
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
      await log.create({ correlationId: id, input: { first: true }, owner: 'alice' });
      await appendOne(incoming(id, { sequence: 1 }));
      const again = await log.create({ correlationId: id, input: { second: true }, owner: 'mallory' });
      expect(again.input).toEqual({ first: true });
      expect(again.owner).toBe('alice');
      expect(again.messages).toHaveLength(1);
    });

    it('fills in a test first seen through its results with its start, keeping its messages, and only once', async () => {
      const id = uniqueId('seen');
      await log.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]);
      const startedAt = Date.now() - 60_000;
      const filled = await log.create({ correlationId: id, input: { name: 'run' }, owner: 'alice', createdAt: startedAt });
      expect(filled).toMatchObject({ correlationId: id, status: 'RUNNING', input: { name: 'run' }, owner: 'alice', createdAt: startedAt });
      expect(filled.messages.map((m) => m.sequence)).toEqual([1, 2]);
      // A second start of the same id (a redelivered request, another subject) changes nothing.
      await log.create({ correlationId: id, input: { forged: true }, owner: 'mallory', createdAt: startedAt + 1 });
      expect(await log.get(id)).toMatchObject({ input: { name: 'run' }, owner: 'alice', createdAt: startedAt, status: 'RUNNING' });
      expect((await log.get(id))?.messages).toHaveLength(2);
    });

    it('records the createdAt a create is given', async () => {
      const id = uniqueId();
      const startedAt = Date.now() - 5_000;
      expect((await log.create({ correlationId: id, input: null, owner: 'alice', createdAt: startedAt })).createdAt).toBe(startedAt);
      expect((await log.get(id))?.createdAt).toBe(startedAt);
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

    it('stores each sequence once, whatever order and repeats the sequences arrive in, in chunks or one by one', async () => {
      // Sequences counting up, out of order, with gaps filled late, and redelivered, among messages
      // keyed by id: both logs keep a run of consecutive sequences apart from the other keys, and
      // must answer the same, a duplicate with its stored copy's receivedAt.
      const sequence = fc.oneof(fc.nat(12), fc.integer({ min: 2_147_483_630, max: 2_147_483_647 }));
      const arrival = fc.oneof({ weight: 4, arbitrary: sequence }, { weight: 1, arbitrary: fc.constantFrom('a', 'b', 'c') });
      // Runs of consecutive sequences too, as a producer that counts up sends them (the Redis log
      // pushes a run that continues its test's as a whole): redelivered, overlapping, past a gap.
      const run = fc.tuple(fc.nat(12), fc.integer({ min: 2, max: 6 })).map(([start, length]) => Array.from({ length }, (_, i) => start + i));
      const arrivals = fc
        .array(fc.oneof({ weight: 3, arbitrary: arrival.map((key) => [key]) }, { weight: 2, arbitrary: run }), { maxLength: 16 })
        .map((parts) => parts.flat());
      await fc.assert(
        fc.asyncProperty(arrivals, fc.integer({ min: 1, max: 8 }), async (arrivals, chunk) => {
          const id = uniqueId('seq');
          const outcomes: string[] = [];
          const receivedAt = new Map<string | number, number>();
          for (let from = 0; from < arrivals.length; from += chunk) {
            const slice = arrivals.slice(from, from + chunk);
            const results = await log.append(slice.map((key) => incoming(id, typeof key === 'number' ? { sequence: key } : { messageId: key })));
            results.forEach((result, i) => {
              const key = slice[i] as string | number;
              if (result.outcome === 'inserted') receivedAt.set(key, result.message.receivedAt);
              else expect(result.message.receivedAt).toBe(receivedAt.get(key));
              outcomes.push(result.outcome);
            });
          }
          const expected = arrivals.map((key, i) => (arrivals.indexOf(key) === i ? 'inserted' : 'duplicate'));
          expect(outcomes).toEqual(expected);
          // Each key once (the read order around unsequenced messages is another test's).
          const stored = (await log.get(id))?.messages.map((m) => m.messageId ?? (m.sequence as number)) ?? [];
          // Sequences alone are read in their order, however they arrived (around unsequenced
          // messages the read order is src/domain/order.ts's, another test's).
          if (stored.every((key) => typeof key === 'number')) expect(stored).toEqual([...stored].sort((a, b) => (a as number) - (b as number)));
          const byKey = (a: string | number, b: string | number) => String(a).localeCompare(String(b));
          expect(stored.sort(byKey)).toEqual([...new Set(arrivals)].sort(byKey));
        }),
        // And always: a run that reaches a sequence stored apart from the run (one by one and in
        // one chunk), and runs redelivered whole and overlapping.
        {
          numRuns: 40,
          examples: [
            [[0, 3, 1, 2, 3], 1],
            [[0, 3, 1, 2, 3, 4], 3],
            [[0, 1, 2, 0, 1, 2, 1, 2, 3, 4], 3],
          ],
        },
      );
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
      const { message } = await appendOne(
        incoming(id, { messageId: 'm1', sequence: 7, status: 'RUNNING', payload: { deep: [1, { x: 'y' }] }, producedAt: 1_700_000_000_000 }),
      );
      expect(message).toMatchObject({
        correlationId: id,
        key: 'm:m1',
        messageId: 'm1',
        sequence: 7,
        status: 'RUNNING',
        final: false,
        payload: { deep: [1, { x: 'y' }] },
        producedAt: 1_700_000_000_000,
      });
      expect(message.receivedAt).toBeGreaterThanOrEqual(before - 1000);
      const [stored] = (await log.get(id))?.messages ?? [];
      expect(stored).toEqual(message);
    });

    it('keeps a payload as its JSON, reading back as the payload itself, with no field of its text', async () => {
      const id = uniqueId();
      // Parsed from the text as a producer may have written it: escapes and a trailing zero that JSON.stringify would not write.
      const payload = JSON.parse(String.raw`{"s":"}{\"\u00e9","n":[1.50,-2],"o":{}}`) as unknown;
      const results = await log.append([incoming(id, { sequence: 1, payload }), incoming(id, { sequence: 2, payload })]);
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

    it('reports itself usable', async () => {
      await expect(log.check()).resolves.toBeUndefined();
    });
  });
}
