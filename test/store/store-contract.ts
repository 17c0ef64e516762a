/**
 * The contract every Store implementation passes. Each implementation's test file calls
 * `describeStoreContract` with a factory that returns a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import type { Store } from '../../src/store/store.js';

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

/** Registers the contract suite for one implementation. */
export function describeStoreContract(name: string, createStore: () => Promise<Store> | Store): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.dispose();
    });

    it('creates a pending test that reads back at once with no messages', async () => {
      const id = uniqueId();
      const created = await store.create({ correlationId: id, input: { name: 'run' }, owner: 'alice' });
      expect(created).toMatchObject({ correlationId: id, status: 'PENDING', input: { name: 'run' }, owner: 'alice', messages: [] });
      const read = await store.get(id);
      expect(read).toMatchObject({ correlationId: id, status: 'PENDING', input: { name: 'run' }, owner: 'alice', messages: [] });
      expect(read?.createdAt).toBeTypeOf('number');
    });

    it('keeps the existing record when create is called again', async () => {
      const id = uniqueId();
      await store.create({ correlationId: id, input: { first: true }, owner: "alice" });
      await store.append(incoming(id, { sequence: 1 }));
      const again = await store.create({ correlationId: id, input: { second: true }, owner: "mallory" });
      expect(again.input).toEqual({ first: true });
      expect(again.owner).toBe('alice');
      expect(again.messages).toHaveLength(1);
    });

    it('returns null for an unknown id, and getMany answers in the order asked', async () => {
      const a = uniqueId('a');
      const b = uniqueId('b');
      await store.create({ correlationId: a, input: null, owner: null });
      await store.create({ correlationId: b, input: null, owner: null });
      expect(await store.get(uniqueId('missing'))).toBeNull();
      const many = await store.getMany([b, uniqueId('missing'), a, b]);
      expect(many.map((r) => r?.correlationId ?? null)).toEqual([b, null, a, b]);
      expect(await store.getMany([])).toEqual([]);
    });

    it('creates the record when a message arrives for an unknown test', async () => {
      const id = uniqueId();
      const result = await store.append(incoming(id, { sequence: 1 }));
      expect(result.outcome).toBe('inserted');
      const read = await store.get(id);
      expect(read).toMatchObject({ correlationId: id, status: 'RUNNING', input: null, owner: null });
      expect(read?.messages).toHaveLength(1);
    });

    it('stores a redelivered message once and reports it as a duplicate', async () => {
      const id = uniqueId();
      await store.create({ correlationId: id, input: null, owner: null });
      const first = await store.append(incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }));
      const second = await store.append(incoming(id, { messageId: 'x', sequence: 1, payload: { v: 1 } }));
      expect(first.outcome).toBe('inserted');
      expect(second.outcome).toBe('duplicate');
      expect(second.message.receivedAt).toBe(first.message.receivedAt);
      expect((await store.get(id))?.messages).toHaveLength(1);
    });

    it('deduplicates by key only: the same sequence under another message id is a new message', async () => {
      const id = uniqueId();
      await store.append(incoming(id, { messageId: 'a', sequence: 1 }));
      const other = await store.append(incoming(id, { messageId: 'b', sequence: 1 }));
      expect(other.outcome).toBe('inserted');
      expect((await store.get(id))?.messages.map((m) => m.messageId)).toEqual(['a', 'b']);
    });

    it('orders messages by sequence where given, else by arrival', async () => {
      const id = uniqueId();
      for (const seq of [3, 1, 2]) await store.append(incoming(id, { sequence: seq }));
      await store.append(incoming(id, { payload: 'unsequenced' }));
      await store.append(incoming(id, { sequence: 5 }));
      await store.append(incoming(id, { sequence: 4 }));
      const read = await store.get(id);
      expect(read?.messages.map((m) => m.sequence)).toEqual([1, 2, 3, null, 4, 5]);
    });

    it('moves the status from pending to running to the terminal status, and keeps it terminal', async () => {
      const id = uniqueId();
      await store.create({ correlationId: id, input: null, owner: null });
      expect((await store.append(incoming(id, { sequence: 1 }))).status).toBe('RUNNING');
      expect((await store.append(incoming(id, { sequence: 2, final: true, status: 'FAILED' }))).status).toBe('FAILED');
      expect((await store.append(incoming(id, { sequence: 3, status: 'COMPLETED' }))).status).toBe('FAILED');
      const read = await store.get(id);
      expect(read?.status).toBe('FAILED');
      expect(read?.messages).toHaveLength(3);
    });

    it('treats final without a status as completed', async () => {
      const id = uniqueId();
      expect((await store.append(incoming(id, { sequence: 1, final: true }))).status).toBe('COMPLETED');
    });

    it('keeps payloads and message fields as given and stamps receivedAt', async () => {
      const id = uniqueId();
      const before = Date.now();
      const { message } = await store.append(incoming(id, { messageId: 'm1', sequence: 7, status: 'RUNNING', payload: { deep: [1, { x: 'y' }] }, producedAt: 1_700_000_000_000 }));
      expect(message).toMatchObject({ correlationId: id, key: 'm:m1', messageId: 'm1', sequence: 7, status: 'RUNNING', final: false, payload: { deep: [1, { x: 'y' }] }, producedAt: 1_700_000_000_000 });
      expect(message.receivedAt).toBeGreaterThanOrEqual(before - 1000);
      const [stored] = (await store.get(id))?.messages ?? [];
      expect(stored).toEqual(message);
    });

    it('bumps updatedAt on append', async () => {
      const id = uniqueId();
      const created = await store.create({ correlationId: id, input: null, owner: null });
      await new Promise((r) => setTimeout(r, 5));
      await store.append(incoming(id, { sequence: 1 }));
      const read = await store.get(id);
      expect(read?.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(read?.createdAt).toBe(created.createdAt);
    });

    it('returns snapshots that later appends do not change', async () => {
      const id = uniqueId();
      await store.append(incoming(id, { sequence: 1 }));
      const snapshot = await store.get(id);
      await store.append(incoming(id, { sequence: 2 }));
      expect(snapshot?.messages).toHaveLength(1);
    });

    it('removes a test', async () => {
      const id = uniqueId();
      await store.create({ correlationId: id, input: null, owner: null });
      expect(await store.remove(id)).toBe(true);
      expect(await store.get(id)).toBeNull();
      expect(await store.remove(id)).toBe(false);
    });

    it('reports itself usable', async () => {
      await expect(store.check()).resolves.toBeUndefined();
    });
  });
}
