/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: its record decoder computes each
 * record's offset and timestamp in 64-bit arithmetic through its `Long` class, a BigInt in an
 * object: both batch bases parsed from their decimal strings again for every record, the
 * timestamp's delta read byte by byte into a chain of `Long`s, each sum printed back to a string.
 * A CPU profile of the ingest benchmark's bare kafkajs consumer put about a tenth of its time there
 * (bench/README.md, "kafkajs's record decoder").
 *
 * This replaces that decoder (kafkajs's `recordBatch/record/v0/decoder.js`) with one that gives
 * every record exactly the object kafkajs gives it, computing in plain numbers while that is exact:
 * each batch's bases are parsed once per batch, and only when their strings are safe integers
 * printed as JavaScript prints them; a delta is read as a number while it fits 49 bits; a sum is
 * printed only when it is a safe integer. Anything else (a base past 2^53, a delta of eight bytes
 * or more, a sum past 2^53, a malformed base) takes kafkajs's own arithmetic, unchanged. Keys,
 * values and headers are read as kafkajs reads them (the header bounds of kafkajs-record-bounds.ts
 * included), except that a record without headers gets one shared, frozen empty object
 * (`NO_RECORD_HEADERS`) where kafkajs makes an array and an object for each.
 *
 * kafkajs's record batch decoder holds the record decoder it required when it was first loaded, so
 * this takes effect only if imported before the consumer's first fetch (the record batch decoder
 * is loaded on first use): {@link kafkajsRecordDecoderInstalled} says whether it did. On any other
 * kafkajs release it changes nothing (test/unit/ingest/kafkajs-record-decoder.test.ts then fails,
 * so the next upgrade looks at it again).
 */
import { createRequire } from 'node:module';
import { kafkajsIsPatchedRelease } from './kafkajs-internals.js';
import { NO_RECORD_HEADERS, shapeRefusal } from './kafkajs-record-bounds.js';

/** kafkajs's `Long`, as far as the fallback uses it. */
interface Long {
  add(addend: Long | number): Long;
  toString(): string;
}
interface LongClass {
  fromValue(value: unknown): Long;
  fromNumber(value: number): Long;
}

/** What this decoder reads of kafkajs's protocol decoder (its `Decoder` class). */
interface Decoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): Long;
  readVarIntBytes(): Buffer | null;
  readVarIntArray<T>(reader: (decoder: Decoder) => T): T[];
}

/** The batch's context kafkajs hands to every record decoded from it. */
interface BatchContext {
  readonly firstOffset?: string;
  readonly firstTimestamp?: string;
  readonly magicByte?: number;
  readonly isControlBatch?: boolean;
  readonly timestampType?: number;
  readonly maxTimestamp?: string;
}

type RecordDecoder = (decoder: Decoder, batchContext?: BatchContext) => Record<string, unknown>;

/** Where the decoder it replaced is kept on the replacement, so that loading this module again finds kafkajs's own. */
const STOCK = Symbol.for('result-collection-service.kafkajs-stock-record-decoder');

/** Whether that replacement was installed (the record batch decoder loaded after it). */
const INSTALLED = Symbol.for('result-collection-service.kafkajs-record-decoder-installed');

/** kafkajs's `TimestampTypes.LOG_APPEND_TIME`. */
const LOG_APPEND_TIME = 1;

/** Bytes of a varlong read as a number: 7 × 7 = 49 bits, exact in a double. */
const FAST_VARLONG_BYTES = 7;

/** A base as a number when its string is a safe integer JavaScript prints the same; otherwise undefined. */
function exactBase(raw: string | undefined): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && String(value) === raw ? value : undefined;
}

/** Reads a zig-zag varlong as a number when it has at most 7 bytes; otherwise leaves the decoder where it was and answers undefined. */
function readSmallVarLong(decoder: Decoder): number | undefined {
  const { buffer } = decoder;
  let offset = decoder.offset;
  let result = 0;
  let scale = 1;
  for (let i = 0; i < FAST_VARLONG_BYTES; i++) {
    // As kafkajs reads it: past the buffer's end a byte reads as undefined, which ends the number.
    const byte = buffer[offset++] as number;
    result += (byte & 0x7f) * scale;
    if (!(byte >= 0x80)) {
      decoder.offset = offset;
      return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
    }
    scale *= 128;
  }
  return undefined;
}

/** The bases of the last batch decoded: a batch's records share one context object. */
let lastContext: BatchContext | undefined;
let offsetBase: number | undefined;
let timestampBase: number | undefined;

/** Creates the replacement decoder over kafkajs's own modules. */
function createRecordDecoder(Long: LongClass, HeaderDecoder: (decoder: Decoder) => { key: string; value: unknown }): RecordDecoder {
  /** `base + delta` printed, in numbers when exact, else with kafkajs's own arithmetic on the raw base. */
  const sum = (base: number | undefined, raw: string | undefined, delta: number | Long): string => {
    if (base !== undefined && typeof delta === 'number') {
      const total = base + delta;
      if (Number.isSafeInteger(total)) return String(total);
    }
    return Long.fromValue(raw)
      .add(typeof delta === 'number' ? Long.fromNumber(delta) : delta)
      .toString();
  };

  /** A record's headers: the shared empty object for none, else kafkajs's own reading and reduction. */
  const readHeaders = (decoder: Decoder): Record<string, unknown> => {
    // No header (a count of zero, one byte) and within the bounds kafkajs-record-bounds.ts checks
    // where the header array is read (the key's length among them): the shared empty headers.
    if (decoder.buffer[decoder.offset] === 0 && shapeRefusal(decoder, 0) === undefined) {
      decoder.offset += 1;
      return NO_RECORD_HEADERS;
    }
    // kafkajs's own reduction, so that a header array the bounds replaced (kafkajs-record-bounds.ts) reduces as it does there.
    return decoder.readVarIntArray(HeaderDecoder).reduce<Record<string, unknown>>(
      (obj, header) => ({
        ...obj,
        [header.key]:
          obj[header.key] === undefined
            ? header.value
            : Array.isArray(obj[header.key])
              ? (obj[header.key] as unknown[]).concat([header.value])
              : [obj[header.key], header.value],
      }),
      {},
    );
  };

  return (decoder, batchContext = {}) => {
    if (batchContext !== lastContext) {
      lastContext = batchContext;
      offsetBase = exactBase(batchContext.firstOffset);
      timestampBase = exactBase(batchContext.firstTimestamp);
    }
    const { firstOffset, firstTimestamp, magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
    const attributes = decoder.readInt8();
    const timestampDelta = readSmallVarLong(decoder) ?? decoder.readVarLong();
    const timestamp = timestampType === LOG_APPEND_TIME && maxTimestamp ? maxTimestamp : sum(timestampBase, firstTimestamp, timestampDelta);
    const offset = sum(offsetBase, firstOffset, decoder.readVarInt());
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const headers = readHeaders(decoder);
    return { magicByte, attributes, timestamp, offset, key, value, headers, isControlRecord: isControlBatch, batchContext };
  };
}

/** kafkajs's own record decoder, as it was before this module replaced it (for the tests that compare the two). */
export let stockRecordDecoder: RecordDecoder | undefined;

/** The replacement (undefined on another kafkajs release). */
export let fastRecordDecoder: RecordDecoder | undefined;

/** True when kafkajs's record batches are decoded by {@link fastRecordDecoder}. */
export let kafkajsRecordDecoderInstalled = false;

if (kafkajsIsPatchedRelease) {
  const require = createRequire(import.meta.url);
  const path = require.resolve('kafkajs/src/protocol/recordBatch/record/v0/decoder.js');
  const current = require(path) as RecordDecoder & { [STOCK]?: RecordDecoder; [INSTALLED]?: boolean };
  const stock = current[STOCK] ?? current;
  const fast = createRecordDecoder(
    require('kafkajs/src/utils/long.js') as LongClass,
    require('kafkajs/src/protocol/recordBatch/header/v0/decoder.js') as (decoder: Decoder) => { key: string; value: unknown },
  );
  // Loaded already, the batch decoder holds whichever record decoder was cached when it loaded:
  // a replacement from an earlier load of this module if that one was installed, else kafkajs's.
  const batchDecoderLoaded = require.cache[require.resolve('kafkajs/src/protocol/recordBatch/v0/decoder.js')] !== undefined;
  kafkajsRecordDecoderInstalled = !batchDecoderLoaded || current[INSTALLED] === true;
  Object.defineProperty(fast, STOCK, { value: stock });
  Object.defineProperty(fast, INSTALLED, { value: kafkajsRecordDecoderInstalled });
  stockRecordDecoder = stock;
  fastRecordDecoder = fast;
  const cached = require.cache[path];
  if (cached !== undefined) cached.exports = fast;
}
