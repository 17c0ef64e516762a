import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { decodeRequest } from '../../../src/ingest/decode-request.js';
import { decodeResult } from '../../../src/ingest/decode-result.js';
import { readEnvelope } from '../../../src/ingest/record-envelope.js';
import { PROTOTYPE_NAMES } from '../../support/prototype-names.js';

const record = (value: unknown, headers: Record<string, string> = {}): BrokerRecord => ({
  topic: 'results',
  partition: 0,
  offset: '1',
  key: null,
  value: Buffer.from(JSON.stringify(value)),
  headers,
});

describe('readEnvelope: one spelling per id', () => {
  const id = randomUUID();
  const upper = id.toUpperCase();

  it('lower-cases a UUID from the header or the field, so an upper-cased id reaches the same test', () => {
    expect(readEnvelope(record({ sequence: 1 }, { correlation_id: upper }))).toMatchObject({ ok: true, correlationId: id });
    expect(readEnvelope(record({ correlationId: upper, sequence: 1 }))).toMatchObject({ ok: true, correlationId: id });
    expect(decodeResult(record({ correlationId: upper, sequence: 1 }))).toMatchObject({ ok: true, message: { correlationId: id } });
    expect(decodeRequest(record({ correlationId: upper, requestedAt: '2026-11-28T00:00:00Z' }))).toMatchObject({ ok: true, request: { correlationId: id } });
  });

  it('takes a header and a field that spell one UUID in two cases as one id', () => {
    expect(readEnvelope(record({ correlationId: id }, { correlation_id: upper }))).toMatchObject({ ok: true, correlationId: id });
  });

  it('leaves an id that is not a UUID as it is, case and all', () => {
    expect(readEnvelope(record({ correlationId: 'Build-42' }))).toMatchObject({ ok: true, correlationId: 'Build-42' });
    expect(readEnvelope(record({ correlationId: 'build-42' }, { correlation_id: 'Build-42' }))).toMatchObject({ ok: false });
  });
});

describe('decodeResult: any names in a record', () => {
  it('decodes or refuses with a reason, whatever the header names and JSON keys (Object.prototype members most often)', () => {
    const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
    fc.assert(
      fc.property(
        fc.dictionary(name, fc.string({ maxLength: 4 }), { maxKeys: 4 }),
        fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        (headerValues, fields) => {
          const headers = Object.assign(Object.create(null) as Record<string, string>, headerValues);
          const decoded = decodeResult({ ...record({ correlationId: randomUUID(), ...fields }), headers });
          if (decoded.ok) expect(typeof decoded.message.correlationId).toBe('string');
          else expect(typeof decoded.reason).toBe('string');
        },
      ),
      { numRuns: 300 },
    );
  });
});
