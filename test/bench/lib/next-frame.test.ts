/** The fan-out ceiling's frames: the bytes graphql-ws's server writes for the same result. */
import { describe, expect, it } from 'vitest';
import { nextFrame, testMessagesResult } from '../../../bench/lib/next-frame.js';

describe('nextFrame', () => {
  it('writes what JSON.stringify of the graphql-ws next message gives, field for field', () => {
    const record = { correlationId: 'c-1', sequence: 7, payload: { sentAt: 1_790_000_000_123, note: 'x"y\\z', nested: [1, null, { a: true }] } };
    const id = '0e3f6a1c-9b7d-4c1e-8f2a-3b5c7d9e1f20';
    const expected = JSON.stringify({ id, type: 'next', payload: { data: { testMessages: { sequence: record.sequence, payload: record.payload } } } });
    expect(nextFrame(id, testMessagesResult(record))).toBe(expected);
  });

  it('escapes an id that needs it', () => {
    expect(JSON.parse(nextFrame('a"b', '{"data":null}'))).toEqual({ id: 'a"b', type: 'next', payload: { data: null } });
  });
});
