/**
 * kafkajs (2.2.4, unmaintained) decodes a record's headers in time quadratic in their count, before
 * the consumer sees the record. With the workaround a record over the bounds is refused at once,
 * carrying a mark no producer can forge, and a record within them is decoded to exactly the object
 * kafkajs builds (property-based, prototype names drawn often, repeated names included).
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_RECORD_BOUNDS,
  kafkajsRecordBoundsPatched,
  recordRefusal,
  REFUSED_RECORD_HEADER,
  setRecordBounds,
} from '../../../src/ingest/kafkajs-record-bounds.js';
import { toBrokerRecord } from '../../../src/ingest/kafkajs-broker-record.js';

const require = createRequire(import.meta.url);
type Headers = Record<string, Buffer | Buffer[] | string | string[]>;
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: {
  key: Buffer | null;
  value: Buffer | null;
  headers?: Headers;
}) => { buffer: Buffer };
const RecordDecoder = require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as (
  decoder: unknown,
  context: object,
) => {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
  headers: Record<string, unknown>;
};
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };

/** A record as kafkajs's fetch decodes it: the encoder's bytes, cut to the record's body, read by its record decoder. */
function decode(record: { key?: string; value?: string; headers?: Headers }) {
  const bytes = encodeRecord({
    key: record.key === undefined ? null : Buffer.from(record.key),
    value: Buffer.from(record.value ?? '{}'),
    ...(record.headers ? { headers: record.headers } : {}),
  }).buffer;
  return RecordDecoder(new Decoder(new Decoder(bytes).readVarIntBytes()), { firstOffset: '7', firstTimestamp: '0' });
}

/** kafkajs 2.2.4's own reduction of a record's header array (protocol/recordBatch/record/v0/decoder.js), verbatim. */
function kafkajsHeaders(array: Array<{ key: string; value: Buffer }>): Record<string, unknown> {
  return array.reduce(
    (obj: Record<string, unknown>, { key, value }) => ({
      ...obj,
      [key]: obj[key] === undefined ? value : Array.isArray(obj[key]) ? (obj[key] as unknown[]).concat([value]) : [obj[key], value],
    }),
    {},
  );
}

/** `count` distinct tiny headers, as a hostile producer sends them. */
function manyHeaders(count: number): Headers {
  const headers: Headers = {};
  for (let i = 0; i < count; i++) headers[`h${i}`] = 'v';
  return headers;
}

afterEach(() => setRecordBounds(DEFAULT_RECORD_BOUNDS));

describe("kafkajs's record decode, bounded", () => {
  it('is replaced on the kafkajs release the workaround was written for', () => {
    expect(kafkajsRecordBoundsPatched).toBe(true);
  });

  it('refuses a record of 12,000 headers without decoding them, saying why, and keeps its key, value and offset', () => {
    const record = decode({ key: 'k', value: '{"a":1}', headers: manyHeaders(12_000) });
    expect(recordRefusal(record.headers)).toBe('record has 12000 headers, more than 64');
    expect(Object.keys(record.headers)).toEqual([REFUSED_RECORD_HEADER]);
    expect([String(record.key), String(record.value), record.offset]).toEqual(['k', '{"a":1}', '7']);
    const broker = toBrokerRecord(record as never, 'results', 0);
    expect(broker.refused).toBe('record has 12000 headers, more than 64');
    expect(Object.keys(broker.headers)).toEqual([]);
  });

  it('refuses headers over their bytes and a key over its length, each at its own bound', () => {
    setRecordBounds({ maxHeaders: 64, maxHeaderBytes: 1000, maxKeyBytes: 300 });
    expect(recordRefusal(decode({ headers: { big: 'x'.repeat(1000) } }).headers)).toMatch(/^record headers take 100\d bytes, more than 1000$/);
    expect(recordRefusal(decode({ headers: { big: 'x'.repeat(900) } }).headers)).toBeUndefined();
    const longKey = decode({ key: 'k'.repeat(301), headers: { a: 'b' } });
    expect(recordRefusal(longKey.headers)).toBe('record key takes 301 bytes, more than 300');
    // Its dead-letter copy carries no key over the bound.
    expect(toBrokerRecord(longKey as never, 'results', 0).key).toBeNull();
    // Without any header too (the record decoder reads a record without headers on a path of its own).
    const longKeyAlone = decode({ key: 'k'.repeat(301) });
    expect(recordRefusal(longKeyAlone.headers)).toBe('record key takes 301 bytes, more than 300');
    expect(toBrokerRecord(longKeyAlone as never, 'results', 0).key).toBeNull();
    expect(recordRefusal(decode({ key: 'k'.repeat(300) }).headers)).toBeUndefined();
    expect(recordRefusal(decode({ key: 'k'.repeat(300), headers: manyHeaders(64) }).headers)).toBeUndefined();
    expect(recordRefusal(decode({ headers: manyHeaders(65) }).headers)).toBe('record has 65 headers, more than 64');
  });

  it("hands on each header's first value as text, in an object without a prototype", () => {
    const record = decode({ headers: { correlation_id: 'a', traceparent: ['first', 'second'], constructor: 'c' } });
    const broker = toBrokerRecord(record as never, 'results', 0);
    expect(Object.getPrototypeOf(broker.headers)).toBeNull();
    expect({ ...broker.headers }).toEqual({ correlation_id: 'a', traceparent: 'first', constructor: 'c' });
    expect(Object.keys(toBrokerRecord(decode({}) as never, 'results', 0).headers)).toEqual([]);
  });

  it('never takes a header a producer sent for the mark', () => {
    const forged = decode({ headers: { [REFUSED_RECORD_HEADER]: 'record has 1 headers' } });
    expect(recordRefusal(forged.headers)).toBeUndefined();
    expect(toBrokerRecord(forged as never, 'results', 0).refused).toBeUndefined();
  });

  it('decodes a record within the bounds to exactly the header object kafkajs builds', () => {
    const names = fc.oneof(
      fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'correlation_id', '0', '1', 'a'),
      fc.string({ maxLength: 6 }),
    );
    const headerList = fc.array(fc.tuple(names, fc.string({ maxLength: 4 })), { maxLength: 40 });
    fc.assert(
      fc.property(headerList, (list) => {
        // Repeated names become arrays on the way out, as a producer sends them.
        const headers = Object.create(null) as Record<string, string[]>;
        for (const [name, value] of list)
          Object.defineProperty(headers, name, { value: [...(headers[name] ?? []), value], enumerable: true, configurable: true });
        const flat = Object.keys(headers).flatMap((key) => (headers[key] as string[]).map((value) => ({ key, value: Buffer.from(value) })));
        const decoded = decode({ headers: headers as Headers }).headers;
        const expected = kafkajsHeaders(flat);
        expect(Reflect.ownKeys(decoded)).toEqual(Reflect.ownKeys(expected));
        expect(Object.getPrototypeOf(decoded)).toBe(Object.getPrototypeOf(expected));
        for (const key of Reflect.ownKeys(expected))
          expect(Object.getOwnPropertyDescriptor(decoded, key)).toEqual(Object.getOwnPropertyDescriptor(expected, key));
        expect(recordRefusal(decoded)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
