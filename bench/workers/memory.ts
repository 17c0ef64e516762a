/**
 * Heap bytes per stored message: appends `count` messages with ~100-byte JSON payloads to the
 * memory store (1,000 tests) and compares the heap before and after, after full collections.
 * Usage: memory.ts <count>
 */
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';

const count = Number(process.argv[2] ?? 1_000_000);
const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10_000, maxMessagesPerTest: 10_000_000 });
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const payloadOf = (i: number) => ({ step: i, status: 'running', note: `measurement ${i} of the nightly run`, value: i * 1.5 });
const payloadBytes = Buffer.byteLength(JSON.stringify(payloadOf(123_456)));

gc();
gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < count; i++) {
  const correlationId = `test-${i % 1000}`;
  const sequence = Math.floor(i / 1000);
  await store.append([
    { correlationId, key: `s:${sequence}`, messageId: null, sequence, status: 'RUNNING', final: false, payload: payloadOf(i), producedAt: null },
  ]);
}
gc();
gc();
const after = process.memoryUsage().heapUsed;
const perMessage = (after - before) / count;
console.log(JSON.stringify({ messages: count, payloadBytes, perMessage, target: 2 * payloadBytes + 64, rss: process.memoryUsage().rss }));
