/**
 * Whatever the results topic carries, a record either becomes a message that stores and reads back
 * as it was decoded, or is refused, counted and dead-lettered: property-based, over the real chunk
 * ingest and the memory and Redis logs. Records are built from arbitrary JSON with the names that
 * reach a prototype (`constructor`, `__proto__`…) in every place a table is looked up, unicode,
 * huge and odd numbers, and deep nesting. And a stored message that cannot be read (written to the
 * shared store by something else) is skipped and counted: the rest of its test is served and
 * followed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainMessage, type TestMessage } from '../../src/domain/types.js';
import type { BrokerRecord } from '../../src/ingest/broker-record.js';
import { createChunkIngest } from '../../src/ingest/chunk-ingest.js';
import type { ConsumerStats } from '../../src/ingest/consumer.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { useRedisLogs } from '../support/redis-logs.js';

const redisLogs = useRedisLogs('rcs-hostile');

/** Names that an object literal answers from its prototype. */
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__', 'CONSTRUCTOR', '__PROTO__'];
const name = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ unit: 'grapheme', maxLength: 12 }));
const anyJson = fc.jsonValue({ maxDepth: 6 });
const oddNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(2 ** 31, 2 ** 53, 2 ** 64, -1, 1e308, 8.64e15, 8.64e15 + 1, Number.MAX_SAFE_INTEGER + 2));
const statusText = fc.oneof(fc.constantFrom('running', 'COMPLETED', 'Failed', 'queued', 'success', 'error'), fc.constantFrom(...PROTOTYPE_NAMES), name);
/** A result record's value: the documented fields, each of any type, with any other fields beside. */
const resultValue = fc.record(
  {
    // Mostly absent (the header names the test), so that most records reach the other fields.
    correlationId: fc.option(fc.oneof(name, anyJson), { freq: 4, nil: undefined }),
    messageId: fc.oneof(name, oddNumber, anyJson),
    sequence: fc.oneof(oddNumber, name, anyJson),
    status: fc.oneof({ weight: 4, arbitrary: statusText }, { weight: 1, arbitrary: anyJson }),
    final: fc.oneof(fc.boolean(), anyJson),
    payload: anyJson,
    producedAt: fc.oneof(
      oddNumber,
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      name,
    ),
    extra: fc.dictionary(name, anyJson, { maxKeys: 4 }),
  },
  { requiredKeys: [] },
);
const recordValue = fc.oneof(
  { weight: 6, arbitrary: resultValue.map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: anyJson.map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);
const headers = fc.dictionary(name, fc.oneof(name, fc.uuid()), { maxKeys: 3 });

let offset = 0;
/** Records as the consumer hands them on; each test's id is fresh so runs do not meet. */
const records = fc.array(fc.tuple(recordValue, headers, fc.boolean()), { minLength: 1, maxLength: 8 }).map((items) => {
  const run = `run-${++offset}`;
  return items.map(([value, extraHeaders, byHeader]): BrokerRecord => {
    const at = String(++offset);
    // A null-prototype header table, as the consumer builds it.
    const table = Object.assign(Object.create(null) as Record<string, string | undefined>, extraHeaders);
    // Half the records name a fresh test in the header (checked against any body field), half do not.
    if (byHeader) table.correlation_id = `${run}-${at}`;
    return { topic: 'results', partition: 0, offset: at, key: null, value: Buffer.from(value), headers: table };
  });
});

const logs: Array<[string, () => ResultLog]> = [
  ['memory', () => createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100_000, maxMessagesPerTest: 10_000 })],
  ['redis', () => redisLogs.createLog()],
];

describe.each(logs)('arbitrary result records into the %s log', (_label, createLog) => {
  it('store and read back what they decoded to, or are refused, counted and dead-lettered', async () => {
    const log = createLog();
    try {
      await fc.assert(
        fc.asyncProperty(records, async (batch) => {
          const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
          const deadLetters: BrokerRecord[] = [];
          const ingest = createChunkIngest({
            onEvents: createResultRecorder({ log }),
            deadLetter: async (record) => void deadLetters.push(record),
            stats,
            log: createSilentLogger(),
          });
          const chunk = ingest.decode(batch);
          await ingest.store(chunk);
          await chunk.deadLettered;
          // Every record is accounted for: stored (or a duplicate of one stored), or refused and dead-lettered.
          expect(stats.consumed).toBe(batch.length);
          expect(stats.stored + stats.duplicates + stats.malformed).toBe(batch.length);
          expect(stats.deadLettered).toBe(stats.malformed);
          expect(deadLetters.length).toBe(stats.malformed);
          expect(new Set([...deadLetters, ...chunk.records])).toEqual(new Set(batch));
          // Every decoded message reads back as it was decoded, whichever test it named.
          for (const message of chunk.messages) {
            const test = await log.get(message.correlationId);
            expect(test).not.toBeNull();
            const stored = test?.messages.find((m) => m.key === message.key) as TestMessage;
            expect(stored).toBeDefined();
            expect({ ...plainMessage(stored), receivedAt: 0, arrival: 0 }).toEqual({ ...JSON.parse(JSON.stringify(message)), receivedAt: 0, arrival: 0 });
            expect(['PENDING', 'RUNNING', 'COMPLETED', 'FAILED']).toContain(test?.status);
          }
        }),
        { numRuns: 200 },
      );
    } finally {
      await log.dispose();
    }
  }, 120_000);

  it('refuses the status names that reach a prototype, and a test they name stays unfinished', async () => {
    const log = createLog();
    try {
      const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
      const ingest = createChunkIngest({ onEvents: createResultRecorder({ log }), deadLetter: async () => undefined, stats, log: createSilentLogger() });
      const id = `proto-${process.pid}-${Date.now()}`;
      const statuses = ['constructor', '__proto__', 'Constructor', 'hasOwnProperty', 'running'];
      const chunk = ingest.decode(
        statuses.map((status, i) => ({
          topic: 'results',
          partition: 0,
          offset: String(i),
          key: null,
          value: Buffer.from(JSON.stringify({ correlationId: id, sequence: i, status })),
          headers: {},
        })),
      );
      await ingest.store(chunk);
      await chunk.deadLettered;
      expect(stats).toMatchObject({ malformed: 4, deadLettered: 4, stored: 1 });
      const test = await log.get(id);
      expect(test?.status).toBe('RUNNING');
      expect(test?.messages.map((m) => [m.sequence, m.status, m.final])).toEqual([[4, 'RUNNING', false]]);
    } finally {
      await log.dispose();
    }
  });
});

describe('a stored message that cannot be read (Redis)', () => {
  it('is skipped and counted; the rest of the test is read, followed live, and completes', async () => {
    const redis = redisLogs.connect();
    const log = redisLogs.createLog({ maxMessagesPerTest: 100 });
    const id = `damaged-${Date.now()}`;
    try {
      await log.create({ correlationId: id, input: { name: 'damaged' }, owner: null });
      const message = (sequence: number, final = false) => ({
        correlationId: id,
        key: `s:${sequence}`,
        messageId: null,
        sequence,
        status: null,
        final,
        payload: { n: sequence },
        producedAt: null,
      });
      await log.append([message(1)]);
      // What an older version stored for `"status": "constructor"`, and other damage, written beside it.
      const list = `${redisLogs.prefix}:{${id}}:msgs`;
      await redis.rpush(list, '{"key":"s:2","messageId":null,"sequence":2,"status":undefined,"final":false,"payload":{},"producedAt":null,"receivedAt":1}');
      await redis.rpush(list, '{"key":"s:3","messageId":null,"sequence":3,"status":{},"final":false,"payload":{},"producedAt":null,"receivedAt":1}');
      await redis.rpush(list, 'not json');
      const before = log.unreadableMessages?.() ?? 0;

      const test = await log.get(id);
      expect(test?.messages.map((m) => m.sequence)).toEqual([1]);
      expect((log.unreadableMessages?.() ?? 0) - before).toBe(3);

      const followed: number[] = [];
      const follower = await log.follow(id, { queueLimit: 1000 });
      const done = (async () => {
        for await (const m of follower) followed.push(m.sequence as number);
      })();
      await log.append([message(5)]);
      await log.append([message(6, true)]);
      await done;
      expect(followed).toEqual([1, 5, 6]);
      expect((await log.get(id))?.status).toBe('COMPLETED');
    } finally {
      await log.dispose();
    }
  });
});
