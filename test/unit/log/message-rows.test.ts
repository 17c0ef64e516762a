/**
 * A test's messages held as columns (src/log/message-rows.ts), against the plain model they
 * replace: compact messages kept in an array in the test's order (domain/order.ts's
 * `insertOrdered`), read by `sliceMessages`. Every read must answer what the array answered.
 */
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { insertOrdered } from '../../../src/domain/order.js';
import { plainMessage, type IncomingMessage, type TestMessage } from '../../../src/domain/types.js';
import { compactMessage, keyKind } from '../../../src/log/compact-message.js';
import { indexOfKey, insertRow, noRows, rowMessages, rowsAfter, sliceRows } from '../../../src/log/message-rows.js';
import { sliceMessages } from '../../../src/log/message-slice.js';
import { runModuleScript } from '../../support/module-script.js';

const test = { correlationId: 'c-1', base: 1_000_000 };

/** A message of one of the key kinds (id, sequence, own key), with or without its optional fields. */
const anIncoming = fc
  .record({
    kind: fc.constantFrom('id', 'sequence', 'own', 'id and own'),
    id: fc.constantFrom('a', 'b', 'toString', '__proto__', 'x'.repeat(40)),
    sequence: fc.option(fc.nat({ max: 20 })),
    status: fc.constantFrom(null, 'PENDING', 'RUNNING', 'COMPLETED', 'FAILED' as const),
    final: fc.boolean(),
    producedAt: fc.option(fc.integer({ min: 0, max: 2_000_000 })),
    payload: fc.jsonValue(),
  })
  .map(({ kind, id, sequence, status, final, producedAt, payload }): IncomingMessage => {
    const messageId = kind === 'id' || kind === 'id and own' ? id : null;
    const key = kind === 'id' ? `m:${id}` : kind === 'sequence' && sequence !== null ? `s:${sequence}` : `o:t/0/${sequence ?? 0}-${id}`;
    return { correlationId: test.correlationId, key, messageId, sequence, status, final, payload, producedAt };
  });

/** The same messages stored both ways, keys deduplicated as the memory log does. */
function storeBoth(incoming: readonly IncomingMessage[]) {
  const rows = noRows();
  const model: TestMessage[] = [];
  const keys = new Set<string>();
  incoming.forEach((message, i) => {
    if (keys.has(message.key)) return;
    keys.add(message.key);
    const stored = compactMessage(message, test.base + 10 * i, test, model.length + 1, keyKind(message));
    insertRow(rows, stored);
    insertOrdered(model, stored);
  });
  return { rows, model };
}

const plain = (messages: readonly TestMessage[]) => messages.map((m) => plainMessage(m));

describe("a test's messages as columns", () => {
  it('reads back what an ordered array of compact messages held: every field, in the same order', () => {
    fc.assert(
      fc.property(fc.array(anIncoming, { maxLength: 40 }), (incoming) => {
        const { rows, model } = storeBoth(incoming);
        expect(rows.length).toBe(model.length);
        expect(plain(rowMessages(rows, test))).toEqual(plain(model));
        expect(JSON.parse(JSON.stringify(rowMessages(rows, test)))).toEqual(JSON.parse(JSON.stringify(model)));
      }),
    );
  });

  it('finds a message by its key, pages after a cursor and lists later arrivals as the array did', () => {
    fc.assert(
      fc.property(fc.array(anIncoming, { maxLength: 40 }), fc.nat({ max: 45 }), fc.nat({ max: 45 }), (incoming, first, passed) => {
        const { rows, model } = storeBoth(incoming);
        for (const [i, message] of model.entries()) {
          expect(indexOfKey(rows, message.key)).toBe(i);
          const page = sliceRows(rows, test, { afterKey: message.key, first });
          const expected = sliceMessages(model, { afterKey: message.key, first });
          expect({ ...page, messages: plain(page.messages) }).toEqual({ ...expected, messages: plain(expected.messages) });
        }
        const start = sliceRows(rows, test, { afterKey: null, first });
        expect(plain(start.messages)).toEqual(plain(sliceMessages(model, { afterKey: null, first }).messages));
        for (const key of ['m:', 's:07', 'o:nothing', 'toString', '__proto__']) {
          if (model.some((m) => m.key === key)) continue;
          expect(indexOfKey(rows, key)).toBe(-1);
          expect(() => sliceRows(rows, test, { afterKey: key, first })).toThrow(expect.objectContaining({ code: 'CURSOR_EXPIRED' }));
        }
        const later = model.filter((m) => m.arrival > passed).sort((a, b) => a.arrival - b.arrival);
        expect(plain(rowsAfter(rows, test, passed))).toEqual(plain(later));
      }),
    );
  });

  it('holds a stored message in its payload text and a few array slots: under 190 bytes of heap with a 96-byte payload', async () => {
    // As one compact object each, 214 bytes (bench/workers/memory.ts's messages); as columns, 168.
    const logModule = fileURLToPath(new URL('../../../src/log/memory-result-log.ts', import.meta.url));
    const script = `
      const { createMemoryResultLog } = await import(${JSON.stringify(logModule)});
      const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10000, maxMessagesPerTest: 1000000 });
      const count = 200000;
      const payloadOf = (i) => ({ step: i, status: 'running', note: 'measurement ' + i + ' of the nightly run', value: i * 1.5 });
      gc(); gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < count; i += 1000) {
        const batch = [];
        for (let j = i; j < i + 1000; j++) {
          const sequence = Math.floor(j / 1000);
          batch.push({ correlationId: 'test-' + (j % 1000), key: 's:' + sequence, messageId: null, sequence, status: 'RUNNING', final: false, payload: payloadOf(j), producedAt: null });
        }
        await log.append(batch);
      }
      gc(); gc();
      const perMessage = (process.memoryUsage().heapUsed - before) / count;
      const page = await log.messages('test-7', { afterKey: null, first: 1000 });
      console.log(JSON.stringify({ perMessage, held: page.totalCount, last: page.messages.at(-1).payload.step }));
    `;
    const child = await runModuleScript(script, { flags: ['--expose-gc'] });
    expect(child.stderr).toBe('');
    const { perMessage, held, last } = JSON.parse(child.stdout) as { perMessage: number; held: number; last: number };
    expect(held).toBe(200);
    expect(last).toBe(199_007);
    console.log(`heap per stored message: ${Math.round(perMessage)} bytes`);
    expect(perMessage).toBeLessThan(190);
  });
});
