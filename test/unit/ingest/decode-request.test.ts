import { describe, expect, it } from 'vitest';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { decodeRequest } from '../../../src/ingest/decode-request.js';

const record = (value: unknown, headers: Record<string, string> = {}): BrokerRecord => ({
  topic: 'requests',
  partition: 0,
  offset: '7',
  key: null,
  value: value === null ? null : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  headers,
});
const requestedAt = '2026-11-21T10:15:30.123Z';

describe('decodeRequest', () => {
  it('reads a start request as the service produces it, with its owner from the rcs-owner header', () => {
    const decoded = decodeRequest(record({ correlationId: 'c1', input: { name: 'nightly' }, requestedAt }, { correlation_id: 'c1', 'rcs-owner': 'alice' }));
    expect(decoded).toEqual({ ok: true, request: { correlationId: 'c1', input: { name: 'nightly' }, owner: 'alice', requestedAt: Date.parse(requestedAt) } });
  });

  it('reads a request without an owner header (or input) as having none', () => {
    expect(decodeRequest(record({ correlationId: 'c1', requestedAt }))).toEqual({
      ok: true,
      request: { correlationId: 'c1', input: null, owner: null, requestedAt: Date.parse(requestedAt) },
    });
    expect(decodeRequest(record({ requestedAt }, { correlation_id: 'from-header', 'rcs-owner': '' }))).toMatchObject({
      ok: true,
      request: { correlationId: 'from-header', owner: null },
    });
  });

  it.each([
    [null, {}, 'empty value'],
    ['not json', {}, 'value is not JSON'],
    ['[1]', {}, 'value is not a JSON object'],
    [{ correlationId: 5, requestedAt }, {}, 'correlationId is not a string'],
    [{ correlationId: 'a', requestedAt }, { correlation_id: 'b' }, 'header correlation_id and field correlationId differ'],
    [{ requestedAt }, {}, 'no correlation id (header correlation_id, or field correlationId or correlation_id)'],
    [{ correlationId: 'x'.repeat(257), requestedAt }, {}, 'correlation id longer than 256 characters'],
    [{ correlationId: 'c1' }, {}, 'requestedAt is not an ISO 8601 time'],
    [{ correlationId: 'c1', requestedAt: 'yesterday' }, {}, 'requestedAt is not an ISO 8601 time'],
  ])('refuses %j (headers %j): %s', (value, headers, reason) => {
    expect(decodeRequest(record(value, headers as Record<string, string>))).toEqual({ ok: false, reason });
  });
});
