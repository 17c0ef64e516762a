/**
 * kafkajs's record decoder, replaced by one that computes offsets and timestamps in numbers while
 * that is exact (src/ingest/kafkajs-record-decoder.ts): it gives every record exactly the object
 * kafkajs's own gives, for any bases and deltas a broker can send (property-based, the bounds of
 * exact arithmetic drawn often, several records to one batch context), and kafkajs's record batch
 * decoder runs it.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastRecordDecoder, kafkajsRecordDecoderInstalled, stockRecordDecoder } from '../../../src/ingest/kafkajs-record-decoder.js';
import { runModuleScript } from '../../support/module-script.js';

const require = createRequire(import.meta.url);
type Headers = Record<string, Buffer | Buffer[] | string | string[]>;
interface RecordFields {
  readonly offsetDelta: number;
  readonly timestampDelta: bigint;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Headers;
}
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: RecordFields) => { buffer: Buffer };
const { RecordBatch: encodeBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch: (batch: {
    firstOffset: bigint;
    firstTimestamp: bigint;
    maxTimestamp: bigint;
    lastOffsetDelta: number;
    records: unknown[];
  }) => Promise<{ buffer: Buffer }>;
};
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: unknown[] }>;

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit value, drawn near the edges of exact arithmetic in numbers as often as anywhere. */
const int64 = fc.oneof(
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.bigInt({ min: SAFE - 1000n, max: SAFE + 1000n }),
  fc.bigInt({ min: -SAFE - 1000n, max: -SAFE + 1000n }),
  fc.bigInt({ min: 1_600_000_000_000n, max: 2_000_000_000_000n }),
  fc.bigInt({ min: MIN_INT64, max: MAX_INT64 }),
);
/** A timestamp delta: small, at the 7-byte varlong's edge (2^48 once zig-zagged), or any 64-bit value. */
const timestampDelta = fc.oneof(
  fc.bigInt({ min: -100_000n, max: 100_000n }),
  fc.bigInt({ min: 2n ** 48n - 100n, max: 2n ** 48n + 100n }),
  fc.bigInt({ min: -(2n ** 48n) - 100n, max: -(2n ** 48n) + 100n }),
  fc.bigInt({ min: MIN_INT64 / 2n, max: MAX_INT64 / 2n }),
);
const bytes = fc.option(fc.uint8Array({ maxLength: 40 }).map((array) => Buffer.from(array)));
const headers = fc.dictionary(fc.constantFrom('a', 'b', 'traceparent', 'constructor', '__proto__'), fc.string({ maxLength: 8 }), { maxKeys: 3 });
const record = fc.record({ offsetDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }), timestampDelta, key: bytes, value: bytes, headers });
const context = fc.record({
  firstOffset: int64.map(String),
  firstTimestamp: int64.map(String),
  magicByte: fc.constant(2),
  isControlBatch: fc.boolean(),
  timestampType: fc.constantFrom(0, 1),
  maxTimestamp: int64.map(String),
});

/** Decodes one encoded record with `decoder`, as kafkajs's batch decoder does: its body cut out, then read. */
function decodeWith(decoder: typeof fastRecordDecoder, fields: RecordFields, batchContext: object) {
  const body = new Decoder(encodeRecord(fields).buffer).readVarIntBytes();
  return (decoder as NonNullable<typeof fastRecordDecoder>)(new Decoder(body) as never, batchContext);
}

describe("kafkajs's record decoder, in numbers while they are exact", () => {
  it("is installed by the consumer loop alone: what the benchmarks' ceilings load of the consumer leaves kafkajs's own", async () => {
    // The ingest benchmark's ceilings import the batch processor (its chunk size) and with it the
    // record conversion; they measure kafkajs's own decoder (bench/workers/ingest.ts).
    const script = [
      "import { createRequire } from 'node:module';",
      "import './src/ingest/kafka-batch-processor.ts';",
      "import './src/ingest/kafkajs-broker-record.ts';",
      "const decoder = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/record/v0/decoder.js');",
      "const replaced = decoder[Symbol.for('result-collection-service.kafkajs-stock-record-decoder')] !== undefined;",
      "await import('./src/ingest/kafka-consumer-loop.ts');",
      "const after = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/record/v0/decoder.js');",
      "console.log(JSON.stringify({ replaced, afterLoop: after[Symbol.for('result-collection-service.kafkajs-stock-record-decoder')] !== undefined }));",
    ].join('\n');
    const { stdout } = await runModuleScript(script);
    expect(JSON.parse(stdout.trim())).toEqual({ replaced: false, afterLoop: true });
  });

  it("replaces kafkajs 2.2.4's, before its record batch decoder is loaded", () => {
    expect(kafkajsRecordDecoderInstalled).toBe(true);
    expect(require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js')).toBe(fastRecordDecoder);
    expect(stockRecordDecoder).not.toBe(fastRecordDecoder);
  });

  it('decodes every record to the object kafkajs decodes it to, records of one batch sharing its context', () => {
    fc.assert(
      fc.property(context, fc.array(record, { minLength: 1, maxLength: 4 }), (batchContext, records) => {
        // A context object each decoder sees alone, as one batch; the same records, the same values.
        const shared = { ...batchContext };
        const stock = records.map((fields) => decodeWith(stockRecordDecoder, fields, { ...batchContext }));
        const fast = records.map((fields) => decodeWith(fastRecordDecoder, fields, shared));
        expect(fast.map(({ batchContext: _context, ...rest }) => rest)).toEqual(stock.map(({ batchContext: _context, ...rest }) => rest));
        for (const decoded of fast) expect(decoded.batchContext).toBe(shared);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads any bytes as kafkajs reads them: truncated records and varlongs too long for numbers included, thrown errors alike', () => {
    // A body of arbitrary bytes, its first byte biased to a long varlong's continuation bits.
    const body = fc.tuple(fc.array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 11 }), fc.uint8Array({ maxLength: 24 }));
    const outcome = (decoder: typeof fastRecordDecoder, bytes: Buffer, batchContext: object) => {
      const reader = new Decoder(bytes) as unknown as { offset: number };
      try {
        const { batchContext: _context, ...rest } = (decoder as NonNullable<typeof fastRecordDecoder>)(reader as never, batchContext);
        return { rest, offset: reader.offset };
      } catch (error) {
        return { threw: `${(error as Error).name}: ${(error as Error).message}`, offset: reader.offset };
      }
    };
    fc.assert(
      fc.property(context, body, (batchContext, [prefix, rest]) => {
        const bytes = Buffer.from([0, ...prefix, ...rest]);
        expect(outcome(fastRecordDecoder, bytes, { ...batchContext })).toEqual(outcome(stockRecordDecoder, bytes, { ...batchContext }));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers exactly past 2^53, where numbers would round', () => {
    const fields = { offsetDelta: 3, timestampDelta: 5n, key: null, value: Buffer.from('{}'), headers: {} };
    const decoded = decodeWith(fastRecordDecoder, fields, { firstOffset: String(SAFE), firstTimestamp: String(SAFE - 2n), timestampType: 0 });
    expect([decoded.offset, decoded.timestamp]).toEqual([String(SAFE + 3n), String(SAFE + 3n)]);
  });

  it('leaves a base that is not a plain decimal to kafkajs, failing where it fails', () => {
    const fields = { offsetDelta: 1, timestampDelta: 2n, key: null, value: null, headers: {} };
    const outcome = (decoder: typeof fastRecordDecoder, firstOffset: string) => {
      try {
        return decodeWith(decoder, fields, { firstOffset, firstTimestamp: '5', timestampType: 0 }).offset;
      } catch (error) {
        return `threw ${(error as Error).name}`;
      }
    };
    for (const base of ['', '1e3', '0x10', '010', ' 7', '-0', '9007199254740993'])
      expect([base, outcome(fastRecordDecoder, base)]).toEqual([base, outcome(stockRecordDecoder, base)]);
    expect(outcome(fastRecordDecoder, '1e3')).toBe('threw SyntaxError');
  });

  it("is what kafkajs's record batch decoder reads a batch's records with", async () => {
    const firstOffset = 9_007_199_254_740_000n;
    const records = [0, 1, 2].map((i) =>
      encodeRecord({ offsetDelta: i, timestampDelta: BigInt(i * 10), key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: { h: `${i}` } }),
    );
    const encoded = await encodeBatch({ firstOffset, firstTimestamp: 1_764_000_000_000n, maxTimestamp: 1_764_000_000_020n, lastOffsetDelta: 2, records });
    // kafkajs's own decoder parses the batch's bases through Long.fromValue for every record; the replacement does not.
    const Long = require('kafkajs/src/utils/long.js') as { fromValue: (value: unknown) => unknown };
    const fromValue = Long.fromValue;
    let parsedBases = 0;
    Long.fromValue = function counted(this: unknown, value: unknown) {
      if (typeof value === 'string') parsedBases += 1;
      return fromValue.call(this, value);
    };
    let batch: { records: unknown[] };
    try {
      batch = await decodeBatch(new Decoder(encoded.buffer));
    } finally {
      Long.fromValue = fromValue;
    }
    expect(parsedBases).toBe(0);
    const decoded = batch.records as Array<{ offset: string; timestamp: string; key: Buffer; headers: Record<string, Buffer> }>;
    expect(decoded.map((r) => [r.offset, r.timestamp, String(r.key), String(r.headers.h)])).toEqual([
      ['9007199254740000', '1764000000000', 'k0', '0'],
      ['9007199254740001', '1764000000010', 'k1', '1'],
      ['9007199254740002', '1764000000020', 'k2', '2'],
    ]);
    // The batch decoder holds the record decoder it required: the replacement.
    expect(require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js')).toBe(fastRecordDecoder);
  });
});
