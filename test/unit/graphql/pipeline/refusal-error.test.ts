/**
 * One error currency: every refusal of the pipeline is a ServiceError, turned into graphql-js's
 * error by refusal-error.ts alone, and every /graphql guard answers with the body of that same
 * ServiceError (base/errors.ts `graphQLErrorBody`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { graphQLErrorBody, ServiceError } from '../../../../src/base/errors.js';
import { isUnexpected } from '../../../../src/graphql/pipeline/format-error.js';
import { refusalError } from '../../../../src/graphql/pipeline/refusal-error.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');

describe('refusalError', () => {
  it('keeps the ServiceError as the original error, its code and details as extensions, and the HTTP status of its code', () => {
    const refusal = new ServiceError('QUERY_TOO_DEEP', 'Too deep.', { details: { maxDepth: 3 } });
    const node = parse('{ a }').definitions[0];
    const error = refusalError(refusal, { nodes: node === undefined ? [] : [node] });
    expect(error.message).toBe('Too deep.');
    expect(error.originalError).toBe(refusal);
    expect(error.extensions).toEqual({ code: 'QUERY_TOO_DEEP', maxDepth: 3, http: { status: 400 } });
    expect(error.locations).toEqual([{ line: 1, column: 1 }]);
    expect(isUnexpected(error)).toBe(false);
  });

  it('carries the headers of the HTTP answer when given (a WWW-Authenticate challenge)', () => {
    const headers = new Map([['www-authenticate', 'Bearer error="insufficient_scope"']]);
    expect(refusalError(new ServiceError('FORBIDDEN', 'No.'), { headers }).extensions).toMatchObject({ code: 'FORBIDDEN', http: { status: 403, headers } });
  });

  it('is the only place in src/ that builds a GraphQL error with a code of its own', () => {
    // A coded error built by hand (`extensions: { code: ... }` or `code: '…' satisfies ErrorCode`)
    // is a second currency; the edge's masking and the token-limit rewording are the exceptions.
    const hits = execFileSync('git', ['grep', '-n', '-E', "extensions: \\{ code|code: '[A-Z_]+' satisfies ErrorCode", '--', 'src'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    const allowed = ['src/graphql/pipeline/format-error.ts', 'src/graphql/pipeline/plugins/shape-limits.ts'];
    expect(hits.filter((hit) => !allowed.some((file) => hit.startsWith(`${file}:`)))).toEqual([]);
  });
});

describe('graphQLErrorBody', () => {
  it('is the GraphQL response of one ServiceError, with its extensions', () => {
    expect(graphQLErrorBody(new ServiceError('RATE_LIMITED', 'Slow down.', { details: { retryAfterSeconds: 7 } }))).toEqual({
      errors: [{ message: 'Slow down.', extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 7 } }],
    });
  });
});
