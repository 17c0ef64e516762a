/**
 * Turns a record of the requests topic back into the start request it carries, for the replicated
 * mode, where every replica reads the requests topic to learn each test's owner and input. Pure:
 * no I/O, no broker client. The record format is the one kafka-request-publisher.ts writes (see
 * docs/kafka.md, "Requests"); the owner travels in a header of the service's own, so the value the
 * external system reads is unchanged.
 */
import type { BrokerRecord } from './broker-record.js';
import { readEnvelope } from './record-envelope.js';
import type { TestRequest } from './request-publisher.js';

/** Header that carries the subject that started the test (absent: no owner). */
export const OWNER_HEADER = 'rcs-owner';

/** The outcome of decoding one request record. */
export type DecodedRequest = { readonly ok: true; readonly request: TestRequest } | { readonly ok: false; readonly reason: string };

/** Decodes one record of the requests topic. */
export function decodeRequest(record: BrokerRecord): DecodedRequest {
  const envelope = readEnvelope(record);
  if (!envelope.ok) return envelope;
  const { value, correlationId } = envelope;
  const requestedAt = typeof value.requestedAt === 'string' ? Date.parse(value.requestedAt) : NaN;
  if (!Number.isFinite(requestedAt)) return fail('requestedAt is not an ISO 8601 time');
  const owner = record.headers[OWNER_HEADER];
  return { ok: true, request: { correlationId, input: value.input ?? null, owner: owner === undefined || owner === '' ? null : owner, requestedAt } };
}

function fail(reason: string): DecodedRequest {
  return { ok: false, reason };
}
