import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareIds, decodeTestCursor, encodeTestCursor, selectPage, type PageCandidate } from '../../../src/log/test-page.js';

const test = (correlationId: string, createdAt: number, status: PageCandidate['status'] = 'PENDING'): PageCandidate => ({ correlationId, createdAt, status });

describe('paging a list of tests', () => {
  // Three tests started in the same millisecond, and one later.
  const tests = [test('b', 10), test('late', 20, 'RUNNING'), test('a', 10, 'FAILED'), test('c', 10)];

  it('orders newest first, ties by correlation id descending, and pages through ties with cursors', () => {
    const ids = (page: PageCandidate[]) => page.map((t) => t.correlationId);
    const first = selectPage(tests, { first: 2 });
    expect(ids(first.page)).toEqual(['late', 'c']);
    expect(first).toMatchObject({ hasNextPage: true, totalCount: 4 });
    const second = selectPage(tests, { first: 2, after: encodeTestCursor(first.page[1] as PageCandidate) });
    expect(ids(second.page)).toEqual(['b', 'a']);
    expect(second.hasNextPage).toBe(false);
  });

  it('continues after the place a cursor names even when its test is no longer listed', () => {
    const page = selectPage(
      tests.filter((t) => t.correlationId !== 'b'),
      { first: 10, after: encodeTestCursor(test('b', 10)) },
    );
    expect(page.page.map((t) => t.correlationId)).toEqual(['a']);
  });

  it('filters by status before counting and paging', () => {
    const page = selectPage(tests, { first: 1, statuses: ['FAILED', 'RUNNING'] });
    expect(page).toMatchObject({ page: [{ correlationId: 'late' }], hasNextPage: true, totalCount: 2 });
  });

  it('round-trips a cursor, ids with colons included, and refuses anything else with BAD_USER_INPUT', () => {
    expect(decodeTestCursor(encodeTestCursor({ createdAt: 1_700_000_000_000, correlationId: 'x:y' }))).toEqual({
      createdAt: 1_700_000_000_000,
      correlationId: 'x:y',
    });
    for (const bad of [
      '',
      'x',
      Buffer.from('abc:id').toString('base64url'),
      Buffer.from('12:').toString('base64url'),
      `${encodeTestCursor({ createdAt: 1, correlationId: 'a' })}=`,
    ]) {
      expect(() => decodeTestCursor(bad), bad).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    }
  });

  it('reads the test id of a cursor in its one spelling: a UUID in either case, any other id as it is', () => {
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(decodeTestCursor(encodeTestCursor({ createdAt: 5, correlationId: uuid.toUpperCase() }))).toEqual({ createdAt: 5, correlationId: uuid });
    const other = `${uuid.toUpperCase()}-run2`;
    expect(decodeTestCursor(encodeTestCursor({ createdAt: 5, correlationId: other }))).toEqual({ createdAt: 5, correlationId: other });
  });

  it('orders correlation ids as Redis orders sorted-set members: by their UTF-8 bytes', () => {
    const sign = (n: number) => Math.sign(n);
    // A character past U+FFFF (a surrogate pair) comes after one from U+E000 up, unlike in UTF-16.
    expect(sign(compareIds('\u{1F600}', '\uFF5E'))).toBe(1);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(sign(compareIds(a, b))).toBe(sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
      }),
      { numRuns: 2000 },
    );
  });
});
