/**
 * What the rate-limit suites check on a refused request, over the pipeline's harness
 * (pipeline/rate-limits.test.ts) and end to end (e2e/rate-limits.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { authedFetch } from './tokens.js';

/** A REST read of a test nobody started: 404 while the budget lasts. */
export const readTest = (url: string, token: string) => authedFetch(`${url}/tests/unknown-${randomUUID()}`, { token });

/** Checks a refused REST request: 429, Retry-After in whole seconds within the minute, a RATE_LIMITED problem. */
export async function expectRefusedProblem(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await response.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterSeconds: retryAfter });
}
