/**
 * Turns a raw result record into a message, or says precisely why it cannot. Pure: no I/O, no
 * broker client, so every rule is unit-tested and the format table in docs/kafka.md ("Results") is
 * checked here.
 */
import type { IncomingMessage, TestStatus } from '../domain/types.js';
import { DEFAULT_JSON_SHAPE, jsonShapeFault, type JsonShapeLimits } from '../base/json-shape.js';
import { recordCoordinates, type BrokerRecord } from './broker-record.js';
import { MAX_ID_LENGTH, readCorrelationId, readRecordObject, type RecordFault } from './record-envelope.js';

/** The outcome of decoding one record. */
export type DecodeResult = { readonly ok: true; readonly message: IncomingMessage } | RecordFault;

export { CORRELATION_HEADER } from './record-envelope.js';

// Accepted spellings of a status, compared in lower case. Other strings are refused rather than
// guessed at, so a typo in the external system shows up in the malformed count. A Map, not an
// object: the key is the record's own text, and an object would answer "constructor" or
// "__proto__" from its prototype.
const STATUS_ALIASES: ReadonlyMap<string, TestStatus> = new Map([
  ['pending', 'PENDING'],
  ['queued', 'PENDING'],
  ['running', 'RUNNING'],
  ['started', 'RUNNING'],
  ['in_progress', 'RUNNING'],
  ['completed', 'COMPLETED'],
  ['succeeded', 'COMPLETED'],
  ['success', 'COMPLETED'],
  ['passed', 'COMPLETED'],
  ['failed', 'FAILED'],
  ['failure', 'FAILED'],
  ['error', 'FAILED'],
]);

/**
 * Decodes one result record; see docs/kafka.md, "Results". A value over `maxBytes` (uncompressed,
 * `RESULT_MAX_BYTES`) is refused like any malformed record, and so is a payload past the shape
 * limits of every stored JSON value (`JSON_MAX_*`): stored, it could never be served back.
 */
export function decodeResult(record: BrokerRecord, maxBytes = Infinity, shape: JsonShapeLimits = DEFAULT_JSON_SHAPE): DecodeResult {
  const decoded = decodeResultMessage(record, maxBytes, shape);
  return 'ok' in decoded ? decoded : { ok: true, message: decoded };
}

/**
 * {@link decodeResult} without its wrapper: the message, or why there is none. The consumer
 * decodes every record through this: no object per record beyond its message (and the parse's),
 * only per refusal.
 */
export function decodeResultMessage(record: BrokerRecord, maxBytes = Infinity, shape: JsonShapeLimits = DEFAULT_JSON_SHAPE): IncomingMessage | RecordFault {
  const value = readRecordObject(record, maxBytes);
  if (typeof value === 'string') return fail(value);
  const correlationId = readCorrelationId(record, value);
  if (typeof correlationId !== 'string') return correlationId;
  const messageId = value.messageId;
  if (messageId !== undefined && messageId !== null && (typeof messageId !== 'string' || messageId === '' || messageId.length > MAX_ID_LENGTH)) {
    return fail(`messageId must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  }
  const sequence = value.sequence;
  if (sequence !== undefined && sequence !== null && !(Number.isSafeInteger(sequence) && (sequence as number) >= 0 && (sequence as number) <= 2_147_483_647)) {
    return fail('sequence must be an integer from 0 to 2147483647');
  }
  let status: TestStatus | null = null;
  if (value.status !== undefined && value.status !== null) {
    if (typeof value.status !== 'string') return fail('status is not a string');
    const known = STATUS_ALIASES.get(value.status.toLowerCase());
    if (known === undefined) return fail(`unknown status "${value.status.slice(0, 40)}"`);
    status = known;
  }
  const final = value.final;
  if (final !== undefined && final !== null && typeof final !== 'boolean') return fail('final is not a boolean');
  const producedAt = parseTime(value.producedAt);
  if (producedAt === undefined) return fail('producedAt is neither an ISO 8601 string nor epoch milliseconds');

  const id = typeof messageId === 'string' ? messageId : null;
  const seq = typeof sequence === 'number' ? sequence : null;
  // A record without a `payload` field is kept whole, so nothing the external system sent is lost.
  const hasPayload = 'payload' in value;
  const fault = jsonShapeFault(hasPayload ? value.payload : value, shape);
  if (fault !== undefined) return fail(`payload is ${fault.reason}`);
  return {
    correlationId,
    key: id !== null ? `m:${id}` : seq !== null ? `s:${seq}` : `o:${recordCoordinates(record)}`,
    messageId: id,
    sequence: seq,
    status,
    final: final === true,
    payload: hasPayload ? value.payload : value,
    producedAt,
  };
}

function fail(reason: string): RecordFault {
  return { ok: false, reason };
}

/** Epoch ms, null when absent, undefined when present but invalid. */
function parseTime(raw: unknown): number | null | undefined {
  if (raw === undefined || raw === null) return null;
  // 8.64e15 ms is the largest instant a Date can hold; nanoseconds or microseconds would pass
  // `Number.isFinite` and then break every read of the test.
  // Whole milliseconds, as a Date holds them (and as every read serves them): a fraction would not
  // survive a store that keeps times relative to one another.
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 && raw <= 8.64e15 ? Math.trunc(raw) : undefined;
  if (typeof raw !== 'string') return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : ms;
}
