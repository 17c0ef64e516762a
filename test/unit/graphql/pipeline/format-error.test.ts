/**
 * The one error edge of every transport: a rule's own code survives Apollo Server's wrapping, the
 * token limit's syntax error becomes QUERY_TOO_MANY_TOKENS, an unexpected error is masked with the
 * request id of its one log line, and internal extensions never leave.
 */
import { GraphQLError, parse } from 'graphql';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/base/errors.js';
import { clientErrors, createErrorFormatter } from '../../../../src/graphql/pipeline/format-error.js';

function edge(debug = false) {
  const lines: Array<{ msg: string; requestId?: string; err?: { message: string } }> = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
  return { formatError: createErrorFormatter({ debug, logger }), lines };
}

/** What Apollo Server does to a validation rule's error: its own code, the rule's error kept as the original. */
function wrappedLikeApollo(ruleError: GraphQLError): GraphQLError {
  return new GraphQLError(ruleError.message, {
    originalError: ruleError,
    extensions: { http: { status: 400 }, ...ruleError.extensions, code: 'GRAPHQL_VALIDATION_FAILED' },
  });
}

describe('the error edge', () => {
  it("restores a rule's own code and limit where Apollo Server wrapped it, without the internal http extension", () => {
    const { formatError } = edge();
    const rule = new GraphQLError('Aliases limit of 3 exceeded, found 4.', {
      extensions: { code: 'QUERY_TOO_MANY_ALIASES', maxAliases: 3, http: { status: 400 } },
    });
    const wrapped = wrappedLikeApollo(rule);
    const { http: _http, ...shown } = wrapped.toJSON().extensions ?? {};
    expect(formatError({ ...wrapped.toJSON(), extensions: shown }, wrapped)).toEqual({
      message: 'Aliases limit of 3 exceeded, found 4.',
      extensions: { code: 'QUERY_TOO_MANY_ALIASES', maxAliases: 3 },
    });
    // graphql-js's own validation errors keep Apollo's code.
    const standard = wrappedLikeApollo(new GraphQLError('Cannot query field "nope" on type "Query".'));
    expect(formatError(standard.toJSON(), standard).extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it("turns graphql-js's token-limit syntax error into QUERY_TOO_MANY_TOKENS, wrapped or not", () => {
    const { formatError } = edge();
    let syntax: GraphQLError | undefined;
    try {
      parse('{ a b c d e }', { maxTokens: 3 });
    } catch (error) {
      syntax = error as GraphQLError;
    }
    expect(syntax?.message).toMatch(/^Syntax Error: Document contains more that 3 tokens/);
    const apollo = new GraphQLError(syntax!.message, { originalError: syntax!, extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    for (const error of [apollo, syntax!]) {
      expect(formatError(error.toJSON(), error)).toMatchObject({
        message: 'Token limit of 3 exceeded.',
        extensions: { code: 'QUERY_TOO_MANY_TOKENS', maxTokens: 3 },
      });
    }
  });

  it('masks an unexpected error under the request id of its one log line, and keeps an expected one', () => {
    const { formatError, lines } = edge();
    const located = new GraphQLError('connect ECONNREFUSED secret-host:6379', {
      originalError: new Error('connect ECONNREFUSED secret-host:6379'),
      path: ['test'],
    });
    const [masked] = clientErrors([located], 'req-1', formatError);
    expect(masked).toEqual({ message: 'Internal server error', path: ['test'], extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req-1' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: 'req-1', err: { message: 'connect ECONNREFUSED secret-host:6379' } });

    const expected = new GraphQLError('No test has this id.', { originalError: new ServiceError('NOT_FOUND', 'No test has this id.'), path: ['test'] });
    expect(clientErrors([expected], 'req-2', formatError)).toEqual([{ message: 'No test has this id.', path: ['test'], extensions: { code: 'NOT_FOUND' } }]);
    expect(lines).toHaveLength(1);
  });

  it("shows an unexpected error's message and stack only in debug mode", () => {
    const { formatError } = edge(true);
    const [shown] = clientErrors([new GraphQLError('boom', { originalError: new Error('boom') })], 'req-3', formatError);
    expect(shown?.message).toBe('boom');
    expect(shown?.extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', requestId: 'req-3', stacktrace: expect.any(Array) });
  });
});
