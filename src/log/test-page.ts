/**
 * Paging a list of tests, the same way in every implementation: newest first by `createdAt`, ties
 * broken by correlation id (descending, by code point as Redis orders them), so the order is total
 * and a cursor names a place in it.
 * A cursor holds the `createdAt` and correlation id of the last test of a page; it stays valid when
 * that test expires or newer tests are started (the next page starts after its place, not after
 * a position).
 */
import { canonicalCorrelationId } from '../domain/correlation-id.js';
import type { TestListPage, TestStatus, TestSummary } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import type { ListOptions } from './result-log.js';

/** What paging needs to know of a test: enough to order and filter it. */
export interface PageCandidate {
  readonly correlationId: string;
  readonly createdAt: number;
  readonly status: TestStatus;
}

interface Place {
  readonly createdAt: number;
  readonly correlationId: string;
}

/** The opaque cursor of a test. */
export function encodeTestCursor(test: Place): string {
  return Buffer.from(`${test.createdAt}:${test.correlationId}`, 'utf8').toString('base64url');
}

/** The place a cursor names; BAD_USER_INPUT for anything that is not a cursor of this list. */
export function decodeTestCursor(cursor: string): Place {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const createdAt = Number(text.slice(0, colon));
  const correlationId = text.slice(colon + 1);
  if (colon <= 0 || !Number.isSafeInteger(createdAt) || correlationId === '' || encodeTestCursor({ createdAt, correlationId }) !== cursor) {
    throw new ServiceError('BAD_USER_INPUT', 'after is not a cursor of this list', { details: { argument: 'after' } });
  }
  // Ordered by the id's one spelling, as the lists hold it.
  return { createdAt, correlationId: canonicalCorrelationId(correlationId) };
}

/**
 * Correlation ids in the order of their UTF-8 bytes, as Redis orders the members of a sorted set:
 * the order of their code points. JavaScript compares UTF-16 code units, which differs only where a
 * surrogate (U+D800–DFFF, half of a character past U+FFFF) meets a unit from U+E000 up.
 */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates move past U+FFFF, the units from U+E000 just below them.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x < 0xe000 ? x + 0x2000 : x - 0x800;
      y = y < 0xe000 ? y + 0x2000 : y - 0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** Newest first; then by correlation id, descending. */
function compareNewestFirst(a: Place, b: Place): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return compareIds(b.correlationId, a.correlationId);
}

/**
 * Orders and filters `candidates` (live tests only), and picks the page `options` asks for: the
 * candidates of the page, whether more follow, and how many match in all.
 */
export function selectPage<T extends PageCandidate>(
  candidates: readonly T[],
  options: ListOptions,
): { readonly page: T[]; readonly hasNextPage: boolean; readonly totalCount: number } {
  const after = options.after === null || options.after === undefined ? null : decodeTestCursor(options.after);
  const statuses = options.statuses === null || options.statuses === undefined ? null : new Set(options.statuses);
  const matching = statuses === null ? candidates.slice() : candidates.filter((test) => statuses.has(test.status));
  matching.sort(compareNewestFirst);
  const start = after === null ? 0 : countBefore(matching, after);
  return { page: matching.slice(start, start + options.first), hasNextPage: start + options.first < matching.length, totalCount: matching.length };
}

/** How many of the ordered `tests` come at or before `place` (binary search). */
function countBefore(tests: readonly Place[], place: Place): number {
  let low = 0;
  let high = tests.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compareNewestFirst(tests[middle] as Place, place) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The page of summaries, with their cursors. */
export function toListPage(page: readonly TestSummary[], hasNextPage: boolean, totalCount: number): TestListPage {
  return { edges: page.map((node) => ({ cursor: encodeTestCursor(node), node })), hasNextPage, totalCount };
}
