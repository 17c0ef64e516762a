/**
 * What every record of the service's topics shares: a JSON object as its value and a correlation
 * id, from the `correlation_id` header or else the value's `correlationId` (or `correlation_id`)
 * field. Read once here for the result and the request decoders alike. Pure: no I/O.
 */
import { canonicalCorrelationId } from '../domain/correlation-id.js';
import type { BrokerRecord } from './broker-record.js';

/** Header that carries the correlation id (the JSON field `correlationId` is the fallback). */
export const CORRELATION_HEADER = 'correlation_id';

/** Longest correlation id (and message id) accepted. */
export const MAX_ID_LENGTH = 256;

/** A record's value as a JSON object, and its correlation id; or why it has none. */
export type RecordEnvelope = { readonly ok: true; readonly value: Record<string, unknown>; readonly correlationId: string } | RecordFault;

/** Why a record has no envelope (or, in decode-result.ts, no message). */
export interface RecordFault {
  readonly ok: false;
  readonly reason: string;
}

/**
 * Reads the JSON object and the correlation id of `record`. A value over `maxBytes` is refused
 * before it is parsed: what a record may make the process hold (and parse) is bounded here.
 */
export function readEnvelope(record: BrokerRecord, maxBytes = Infinity): RecordEnvelope {
  const value = readRecordObject(record, maxBytes);
  if (typeof value === 'string') return fail(value);
  const correlationId = readCorrelationId(record, value);
  return typeof correlationId === 'string' ? { ok: true, value, correlationId } : correlationId;
}

/**
 * The JSON object of `record`'s value, or why it has none (a string: a JSON object never is one).
 * The halves of {@link readEnvelope}, for the result decoder, which runs for every record: no
 * envelope object per record, only per refusal.
 */
export function readRecordObject(record: BrokerRecord, maxBytes = Infinity): Record<string, unknown> | string {
  const bytes = record.value;
  if (bytes === null || bytes.length === 0) return 'empty value';
  if (bytes.length > maxBytes) return `value larger than ${maxBytes} bytes`;
  const text = bytes.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'value is not JSON';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'value is not a JSON object';
  return body as Record<string, unknown>;
}

/**
 * The correlation id of `record`, whose value is `value`, in its one spelling; or why it has none.
 * The value may name it `correlationId`, as the service's own records do, or `correlation_id`, as
 * the specification names the message's field (and the header): a producer written from either
 * is read, and two that disagree are refused, as a header and a field that disagree are.
 */
export function readCorrelationId(record: BrokerRecord, value: Record<string, unknown>): string | RecordFault {
  const header = record.headers[CORRELATION_HEADER];
  const field = readIdField(value);
  if (field !== undefined && typeof field !== 'string') return field;
  // Each spelled once: the header's, when there is one, is the id's.
  const canonical = header === undefined ? undefined : canonicalCorrelationId(header);
  if (canonical !== undefined && field !== undefined && canonical !== canonicalCorrelationId(field))
    return fail(`header correlation_id and field ${value.correlationId === undefined ? CORRELATION_HEADER : 'correlationId'} differ`);
  const correlationId = header ?? field;
  if (correlationId === undefined || correlationId === '') return fail('no correlation id (header correlation_id, or field correlationId or correlation_id)');
  if (correlationId.length > MAX_ID_LENGTH) return fail(`correlation id longer than ${MAX_ID_LENGTH} characters`);
  // One spelling per id: an upper-cased UUID reaches the test its lower-case spelling names.
  return canonical ?? canonicalCorrelationId(correlationId);
}

/** The value's correlation id field, none, or why it cannot be one (no object per record: every record is read here). */
function readIdField(value: Record<string, unknown>): string | RecordFault | undefined {
  const camel = value.correlationId;
  // Null is no value, as for the other fields of a result: a record that carried one was stored before the field was read.
  const snake = value[CORRELATION_HEADER] ?? undefined;
  if (camel !== undefined && typeof camel !== 'string') return fail('correlationId is not a string');
  if (snake !== undefined && typeof snake !== 'string') return fail('correlation_id is not a string');
  if (camel !== undefined && snake !== undefined && canonicalCorrelationId(camel) !== canonicalCorrelationId(snake))
    return fail('fields correlationId and correlation_id differ');
  return camel ?? snake;
}

function fail(reason: string): RecordFault {
  return { ok: false, reason };
}
