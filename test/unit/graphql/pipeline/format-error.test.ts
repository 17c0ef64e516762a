/**
 * The one error edge of every transport: a rule's own code survives Apollo Server's wrapping, the
 * token limit's syntax error becomes QUERY_TOO_MANY_TOKENS, an unexpected error is masked with the
 * request id of its one log line, internal extensions never leave, and every client error has a code.
 */
import { buildSchema, execute, GraphQLError, parse, type GraphQLFormattedError } from 'graphql';
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

  describe("graphql-js's own errors during execution, as it raises them", () => {
    const schema = buildSchema('type Query { echo(ids: [ID!]!): [ID!]! broken: Int }');
    const run = async (query: string, variableValues: Record<string, unknown>) => {
      const result = await execute({
        schema,
        document: parse(query),
        variableValues,
        rootValue: { echo: ({ ids }: { ids: string[] }) => ids, broken: 'not a number' },
      });
      return result.errors ?? [];
    };
    /** As Apollo Server hands it over: every error without a code of its own formatted as INTERNAL_SERVER_ERROR. */
    const apolloFormatted = (error: GraphQLError): GraphQLFormattedError => ({ ...error.toJSON(), extensions: { code: 'INTERNAL_SERVER_ERROR' } });

    it('gives an argument the variables made invalid BAD_USER_INPUT, never none and never INTERNAL_SERVER_ERROR', async () => {
      const { formatError, lines } = edge();
      for (const query of ['query($ids: [ID!] = ["a"]) { echo(ids: $ids) }', 'query($id: ID = "a") { echo(ids: [$id]) }']) {
        const [error] = await run(query, { ids: null, id: null });
        expect(error?.message, query).toMatch(/^Argument "ids"/);
        expect(formatError(error!.toJSON(), error).extensions, query).toEqual({ code: 'BAD_USER_INPUT' });
        expect(formatError(apolloFormatted(error!), error).extensions, query).toEqual({ code: 'BAD_USER_INPUT' });
      }
      expect(lines).toHaveLength(0);
    });

    it('masks a value the service could not serialize (a bug), and logs it', async () => {
      const { formatError, lines } = edge();
      const [error] = await run('{ broken }', {});
      expect(error?.message).toMatch(/Int cannot represent/);
      const [shown] = clientErrors([error!], 'req-4', formatError);
      expect(shown).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req-4' } });
      expect(lines).toHaveLength(1);
    });

    it('gives a bare client error BAD_USER_INPUT, and keeps any code an error has', () => {
      const { formatError } = edge();
      const bare = new GraphQLError('Variable "$b" got invalid value 1; Boolean cannot represent a non boolean value: 1');
      expect(formatError(bare.toJSON(), bare).extensions).toEqual({ code: 'BAD_USER_INPUT' });
      const coded = new GraphQLError('Unknown persisted document.', { extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
      expect(formatError(coded.toJSON(), coded).extensions).toEqual({ code: 'PERSISTED_QUERY_NOT_FOUND' });
    });
  });
});
