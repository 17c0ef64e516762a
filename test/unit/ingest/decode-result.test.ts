import { describe, expect, it } from 'vitest';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { decodeResult } from '../../../src/ingest/decode-result.js';

const record = (value: unknown, headers: Record<string, string> = {}, offset = '42'): BrokerRecord => ({
  topic: 'results',
  partition: 3,
  offset,
  key: null,
  value: value === null ? null : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  headers,
});

describe('decodeResult', () => {
  it('reads the documented fields', () => {
    const result = decodeResult(
      record({
        correlationId: 'c1',
        messageId: 'm-1',
        sequence: 4,
        status: 'running',
        final: false,
        payload: { p: 1 },
        producedAt: '2026-01-02T03:04:05.000Z',
      }),
    );
    expect(result).toEqual({
      ok: true,
      message: {
        correlationId: 'c1',
        key: 'm:m-1',
        messageId: 'm-1',
        sequence: 4,
        status: 'RUNNING',
        final: false,
        payload: { p: 1 },
        producedAt: Date.parse('2026-01-02T03:04:05.000Z'),
      },
    });
  });

  it('takes the correlation id from the header when the body has none', () => {
    const result = decodeResult(record({ sequence: 1, payload: null }, { correlation_id: 'from-header' }));
    expect(result.ok && result.message.correlationId).toBe('from-header');
    expect(result.ok && result.message.payload).toBeNull();
  });

  it('reads the correlation id from the field the specification names, correlation_id, as from correlationId', () => {
    const snake = decodeResult(record({ correlation_id: 'Spec-Named', sequence: 1 }));
    expect(snake.ok && snake.message.correlationId).toBe('Spec-Named');
    const both = decodeResult(record({ correlationId: 'same', correlation_id: 'same', sequence: 1 }));
    expect(both.ok && both.message.correlationId).toBe('same');
    const withHeader = decodeResult(record({ correlation_id: 'h' }, { correlation_id: 'h' }));
    expect(withHeader.ok && withHeader.message.correlationId).toBe('h');
    // A null one is no value, as before the field was read.
    const nullAlias = decodeResult(record({ correlationId: 'c', correlation_id: null }));
    expect(nullAlias.ok && nullAlias.message.correlationId).toBe('c');
  });

  it('chooses the dedupe key: messageId, else sequence, else coordinates', () => {
    const a = decodeResult(record({ correlationId: 'c', messageId: 'x', sequence: 1 }));
    const b = decodeResult(record({ correlationId: 'c', sequence: 1 }));
    const c = decodeResult(record({ correlationId: 'c' }));
    expect([a, b, c].map((r) => r.ok && r.message.key)).toEqual(['m:x', 's:1', 'o:results/3/42']);
  });

  it('keeps a record without a payload field whole', () => {
    const result = decodeResult(record({ correlationId: 'c', score: 9 }));
    expect(result.ok && result.message.payload).toEqual({ correlationId: 'c', score: 9 });
  });

  it('marks terminal statuses and final flags', () => {
    const completed = decodeResult(record({ correlationId: 'c', status: 'SUCCEEDED' }));
    const failed = decodeResult(record({ correlationId: 'c', status: 'error', final: true }));
    expect(completed.ok && completed.message.status).toBe('COMPLETED');
    expect(failed.ok && [failed.message.status, failed.message.final]).toEqual(['FAILED', true]);
  });

  it('accepts producedAt as epoch milliseconds', () => {
    const result = decodeResult(record({ correlationId: 'c', producedAt: 1_700_000_000_000 }));
    expect(result.ok && result.message.producedAt).toBe(1_700_000_000_000);
  });

  it('keeps whole milliseconds of a producedAt with a fraction, as a Date does', () => {
    const results = [1_700_000_000_000.9, 5e-324].map((producedAt) => decodeResult(record({ correlationId: 'c', producedAt })));
    expect(results.map((r) => r.ok && r.message.producedAt)).toEqual([1_700_000_000_000, 0]);
  });

  it.each([
    ['empty value', null, {}, 'empty value'],
    ['not JSON', '{oops', {}, 'value is not JSON'],
    ['a JSON array', [1, 2], {}, 'value is not a JSON object'],
    ['a JSON string', '"text"', {}, 'value is not a JSON object'],
    ['no correlation id', { sequence: 1 }, {}, 'no correlation id'],
    ['an empty correlation id', { correlationId: '' }, {}, 'no correlation id'],
    ['a numeric correlation id', { correlationId: 7 }, {}, 'correlationId is not a string'],
    ['header and field disagreeing', { correlationId: 'a' }, { correlation_id: 'b' }, 'differ'],
    [
      "header and the specification's field disagreeing",
      { correlation_id: 'a' },
      { correlation_id: 'b' },
      'header correlation_id and field correlation_id differ',
    ],
    ['the two fields disagreeing', { correlationId: 'a', correlation_id: 'b' }, {}, 'fields correlationId and correlation_id differ'],
    ['a numeric correlation_id', { correlation_id: 7 }, {}, 'correlation_id is not a string'],
    ['a fractional sequence', { correlationId: 'c', sequence: 1.5 }, {}, 'sequence'],
    ['a negative sequence', { correlationId: 'c', sequence: -1 }, {}, 'sequence'],
    ['a string sequence', { correlationId: 'c', sequence: '1' }, {}, 'sequence'],
    ['an object messageId', { correlationId: 'c', messageId: {} }, {}, 'messageId'],
    ['an unknown status', { correlationId: 'c', status: 'exploded' }, {}, 'unknown status'],
    ['a non-boolean final', { correlationId: 'c', final: 'yes' }, {}, 'final'],
    ['a bad producedAt', { correlationId: 'c', producedAt: 'yesterday' }, {}, 'producedAt'],
    ['a producedAt in nanoseconds (past the last instant a date can hold)', { correlationId: 'c', producedAt: 1.7e18 }, {}, 'producedAt'],
    ['an overlong correlation id', { correlationId: 'x'.repeat(300) }, {}, 'longer than'],
  ])('refuses %s', (_label, value, headers, reason) => {
    const result = decodeResult(record(value, headers as Record<string, string>));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(reason);
  });
});
