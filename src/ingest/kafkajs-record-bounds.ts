/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: it decodes a record's headers
 * into an object by spreading the object built so far once per header, in time that grows with
 * the square of their count (6,000 headers of a few bytes, 60 kB, hold the event loop about 5 s;
 * 12,000 over 20 s), and it allocates an array of whatever count the record states. All of it runs
 * inside the fetch, before the consumer sees the record: the session expires, nothing is
 * committed, the record is fetched again forever, and a restarted replica stalls on it.
 *
 * This replaces the read of a record's header array (kafkajs's Decoder, when it reads headers)
 * with one that first looks at the record's shape: its header count, its header bytes (headers
 * are the last field of a record, so the rest of the record's bytes) and its key's length. A
 * record over a bound is not decoded further: its headers are skipped at once and it is handed on
 * carrying a single mark (a value only this module makes, which no producer can send) that says
 * why; {@link recordRefusal} reads it, and the consumer counts, dead-letters and commits such a
 * record like a malformed one. A record within the bounds gets its headers in linear time, with
 * exactly the object kafkajs builds (repeated names collected into an array, in order).
 *
 * Importing the module applies it, once; on any other kafkajs release it changes nothing
 * (test/unit/ingest/kafkajs-record-bounds.test.ts then fails, so the next upgrade looks at it).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

/** What a record may carry before it is decoded. */
export interface RecordBounds {
  /** Most headers one record may carry (`KAFKA_RECORD_MAX_HEADERS`). */
  readonly maxHeaders: number;
  /** Most bytes its headers may take, names and values with their lengths (`KAFKA_RECORD_MAX_HEADER_BYTES`). */
  readonly maxHeaderBytes: number;
  /** Longest key, in bytes (`KAFKA_RECORD_MAX_KEY_BYTES`). */
  readonly maxKeyBytes: number;
}

/** The bounds used until {@link setRecordBounds} is called (the settings' defaults). */
export const DEFAULT_RECORD_BOUNDS: RecordBounds = { maxHeaders: 64, maxHeaderBytes: 16 * 1024, maxKeyBytes: 4 * 1024 };

let bounds: RecordBounds = DEFAULT_RECORD_BOUNDS;

/** Sets the bounds every kafkajs client of the process decodes records with (the last call wins, as for the codecs). */
export function setRecordBounds(next: RecordBounds): void {
  bounds = next;
}

/** The bounds in force. */
export function recordBounds(): RecordBounds {
  return bounds;
}

/**
 * The headers of every record the service's record decoder (kafkajs-record-decoder.ts) reads
 * without any: one empty object, frozen, where kafkajs makes an array and an object for each (most
 * records carry none). Here, not there: the modules that read it (kafkajs-broker-record.ts) must
 * not install that decoder, which the benchmarks' ceilings run without.
 */
export const NO_RECORD_HEADERS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The header name under which a refused record carries its mark. */
export const REFUSED_RECORD_HEADER = '\u0000record-refused';

/** The marks this module made; a header value a producer sent is a Buffer, never one of these. */
const marks = new WeakSet<object>();

/** Why a record was refused before its headers were decoded, or undefined for an ordinary record. */
export function recordRefusal(headers: Readonly<Record<string, unknown>> | undefined): string | undefined {
  // The shared empty headers (most records) are never marked: nothing to look up.
  if (headers === undefined || headers === NO_RECORD_HEADERS) return undefined;
  const mark = Object.getOwnPropertyDescriptor(headers, REFUSED_RECORD_HEADER)?.value;
  return typeof mark === 'object' && mark !== null && marks.has(mark) ? (mark as { reason: string }).reason : undefined;
}

/** What this patch touches of kafkajs's protocol decoder (its `Decoder` class). */
interface Decoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): unknown;
  readVarIntArray<T>(reader: (decoder: Decoder) => T): T[];
}

interface Header {
  readonly key: string;
  readonly value: unknown;
}

/** Why a record whose header array starts at `decoder.offset` is over the bounds; undefined when it is not. */
export function shapeRefusal(decoder: Decoder, count: number, limits: RecordBounds = bounds): string | undefined {
  const headerBytes = decoder.buffer.length - decoder.offset;
  if (count > limits.maxHeaders) return `record has ${count} headers, more than ${limits.maxHeaders}`;
  if (headerBytes > limits.maxHeaderBytes) return `record headers take ${headerBytes} bytes, more than ${limits.maxHeaderBytes}`;
  // The key is within what precedes the headers: only a record whose key and value together pass
  // the bound has its key's length read (the fourth field: attributes, timestamp delta, offset delta, key).
  if (decoder.offset <= limits.maxKeyBytes) return undefined;
  const prefix = new (decoder.constructor as new (buffer: Buffer) => Decoder)(decoder.buffer);
  prefix.readInt8();
  prefix.readVarLong();
  prefix.readVarInt();
  const keyBytes = prefix.readVarInt();
  if (keyBytes > limits.maxKeyBytes) return `record key takes ${keyBytes} bytes, more than ${limits.maxKeyBytes}`;
  return undefined;
}

/**
 * kafkajs's header object, built in linear time: the record decoder reduces the array it is given
 * with a spread per header; this array's own `reduce` builds the same object directly. `__proto__`
 * is defined (never assigned), so it is an own name as in kafkajs's literal, and a name is
 * looked up as kafkajs looks it up (inherited ones included: `constructor` becomes `[Object, value]`).
 */
function linearHeaders(headers: Header[]): Header[] {
  Object.defineProperty(headers, 'reduce', {
    value: () => {
      const object: Record<string, unknown> = {};
      const owned = new Set<unknown[]>();
      for (const { key, value } of headers) {
        const before = object[key];
        let after: unknown;
        if (before === undefined) after = value;
        else if (Array.isArray(before) && owned.has(before)) (after = before).push(value);
        else owned.add((after = Array.isArray(before) ? [...(before as unknown[]), value] : [before, value]) as unknown[]);
        // Assigned where that is the same (no other name has a setter on Object.prototype): faster.
        if (key === '__proto__') Object.defineProperty(object, key, { value: after, writable: true, enumerable: true, configurable: true });
        else object[key] = after;
      }
      return object;
    },
  });
  return headers;
}

/** Header counts above which the linear reduction replaces kafkajs's own. */
const LINEAR_FROM = 8;

/** True when the installed kafkajs decodes records with these bounds. */
export const kafkajsRecordBoundsPatched = kafkajsIsPatchedRelease;

if (kafkajsRecordBoundsPatched) {
  const Decoder = requireKafkajsModule<{ prototype: Decoder }>('kafkajs/src/protocol/decoder.js');
  const HeaderDecoder = requireKafkajsModule<unknown>('kafkajs/src/protocol/recordBatch/header/v0/decoder.js');
  const readVarIntArray = Decoder.prototype.readVarIntArray;
  Decoder.prototype.readVarIntArray = function boundedReadVarIntArray<T>(this: Decoder, reader: (decoder: Decoder) => T): T[] {
    if (reader !== HeaderDecoder) return readVarIntArray.call(this, reader) as T[];
    const start = this.offset;
    const count = this.readVarInt();
    this.offset = start;
    const reason = shapeRefusal(this, count);
    if (reason === undefined) {
      const headers = readVarIntArray.call(this, reader) as Header[];
      // A few headers cost kafkajs's own reduction next to nothing: most records keep it.
      return (count > LINEAR_FROM ? linearHeaders(headers) : headers) as T[];
    }
    // Skipped: nothing of the headers is read, and the record ends with them.
    this.offset = this.buffer.length;
    const mark = Object.freeze({ reason });
    marks.add(mark);
    return linearHeaders([{ key: REFUSED_RECORD_HEADER, value: mark }]) as T[];
  };
}
