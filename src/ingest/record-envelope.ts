/**
 * What every record of the service's topics shares: a JSON object as its value and a correlation
 * id, from the `correlation_id` header or else the value's `correlationId` field. Read once here
 * for the result and the request decoders alike. Pure: no I/O.
 */
import { canonicalCorrelationId } from '../domain/correlation-id.js';
import type { BrokerRecord } from './broker-record.js';

/** Header that carries the correlation id (the JSON field `correlationId` is the fallback). */
export const CORRELATION_HEADER = 'correlation_id';

/** Longest correlation id (and message id) accepted. */
export const MAX_ID_LENGTH = 256;

/** A record's value as a JSON object, and its correlation id; or why it has none. */
export type RecordEnvelope =
  { readonly ok: true; readonly value: Record<string, unknown>; readonly correlationId: string } | { readonly ok: false; readonly reason: string };

/**
 * Reads the JSON object and the correlation id of `record`. A value over `maxBytes` is refused
 * before it is parsed: what a record may make the process hold (and parse) is bounded here.
 */
export function readEnvelope(record: BrokerRecord, maxBytes = Infinity): RecordEnvelope {
  const bytes = record.value;
  if (bytes === null || bytes.length === 0) return fail('empty value');
  if (bytes.length > maxBytes) return fail(`value larger than ${maxBytes} bytes`);
  const text = bytes.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fail('value is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail('value is not a JSON object');
  const value = body as Record<string, unknown>;
  const header = record.headers[CORRELATION_HEADER];
  const field = value.correlationId;
  if (field !== undefined && typeof field !== 'string') return fail('correlationId is not a string');
  // Each spelled once: the header's, when there is one, is the id's.
  const canonical = header === undefined ? undefined : canonicalCorrelationId(header);
  if (canonical !== undefined && field !== undefined && canonical !== canonicalCorrelationId(field))
    return fail('header correlation_id and field correlationId differ');
  const correlationId = header ?? field;
  if (correlationId === undefined || correlationId === '') return fail('no correlation id (header correlation_id or field correlationId)');
  if (correlationId.length > MAX_ID_LENGTH) return fail(`correlation id longer than ${MAX_ID_LENGTH} characters`);
  // One spelling per id: an upper-cased UUID reaches the test its lower-case spelling names.
  return { ok: true, value, correlationId: canonical ?? canonicalCorrelationId(correlationId) };
}

function fail(reason: string): RecordEnvelope {
  return { ok: false, reason };
}
