/**
 * Turns a record of the requests topic back into the start request it carries, for the replicated
 * mode, where every replica reads the requests topic to learn each test's owner and input. Pure:
 * no I/O, no broker client. The record format is the one kafka-request-publisher.ts writes (see
 * the README's "Requests"); the owner travels in a header of the service's own, so the value the
 * external system reads is unchanged.
 */
import type { BrokerRecord } from './broker-record.js';
import { CORRELATION_HEADER } from './decode-result.js';
import type { TestRequest } from './request-publisher.js';

/** Header that carries the subject that started the test (absent: no owner). */
export const OWNER_HEADER = 'rcs-owner';

const MAX_ID_LENGTH = 256;

/** The outcome of decoding one request record. */
export type DecodedRequest = { readonly ok: true; readonly request: TestRequest } | { readonly ok: false; readonly reason: string };

/** Decodes one record of the requests topic. */
export function decodeRequest(record: BrokerRecord): DecodedRequest {
  if (record.value === null || record.value.length === 0) return fail('empty value');
  let body: unknown;
  try {
    body = JSON.parse(record.value.toString('utf8'));
  } catch {
    return fail('value is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail('value is not a JSON object');
  const value = body as Record<string, unknown>;
  const header = record.headers[CORRELATION_HEADER];
  const field = value.correlationId;
  if (field !== undefined && typeof field !== 'string') return fail('correlationId is not a string');
  if (header !== undefined && field !== undefined && header !== field) return fail('header correlation_id and field correlationId differ');
  const correlationId = header ?? field;
  if (correlationId === undefined || correlationId === '') return fail('no correlation id (header correlation_id or field correlationId)');
  if (correlationId.length > MAX_ID_LENGTH) return fail(`correlation id longer than ${MAX_ID_LENGTH} characters`);
  const requestedAt = typeof value.requestedAt === 'string' ? Date.parse(value.requestedAt) : NaN;
  if (!Number.isFinite(requestedAt)) return fail('requestedAt is not an ISO 8601 time');
  const owner = record.headers[OWNER_HEADER];
  return { ok: true, request: { correlationId, input: value.input ?? null, owner: owner === undefined || owner === '' ? null : owner, requestedAt } };
}

function fail(reason: string): DecodedRequest {
  return { ok: false, reason };
}
