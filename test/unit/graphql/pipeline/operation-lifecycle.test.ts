/**
 * The lifecycle's composition of its plugins: values merged, hooks run in order, the first
 * refusal wins, and a ServiceError refusal becomes the GraphQL error every transport answers with.
 */
import { buildSchema, GraphQLError, parse, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/base/errors.js';
import { createOperationLifecycle, MAX_VALIDATION_ERRORS } from '../../../../src/graphql/pipeline/operation-lifecycle.js';
import type { OperationPlugin } from '../../../../src/graphql/pipeline/operation-plugin.js';
import { documentCachingPlugin } from '../../../../src/graphql/pipeline/plugins/document-caching.js';
import { testPrincipal } from '../../../support/principal.js';

const schema = buildSchema('type Query { a: Int, b: Int }');
const principal = testPrincipal();

/** What the lifecycle reported of failing observers, as `plugin hook: message`. */
const failures: string[] = [];

function lifecycleOf(plugins: OperationPlugin[]) {
  return createOperationLifecycle({
    schema,
    plugins,
    createContext: (who) => ({ who }),
    observerFailed: (plugin, hook, error) => failures.push(`${plugin} ${hook}: ${(error as Error).message}`),
  });
}

describe('the operation lifecycle', () => {
  it("merges the plugins' parse options, rules and validation options", () => {
    const rule = () => ({});
    const lifecycle = lifecycleOf([
      { name: 'one', parseOptions: { maxTokens: 10 }, validationRules: [rule], validationOptions: { maxErrors: 3 } },
      { name: 'two', validationOptions: { hideSuggestions: true } },
    ]);
    expect(lifecycle.parseOptions).toEqual({ maxTokens: 10 });
    expect(lifecycle.validationRules).toEqual([rule]);
    expect(lifecycle.validationOptions).toEqual({ maxErrors: 3, hideSuggestions: true });
    expect(lifecycleOf([]).validationOptions).toEqual({ maxErrors: MAX_VALIDATION_ERRORS, hideSuggestions: false });
  });

  it("starts and stops what the plugins need running, each plugin's once", async () => {
    const ran: string[] = [];
    const lifecycle = lifecycleOf([
      { name: 'feed', onServiceStart: async () => void ran.push('start feed'), onServiceStop: () => void ran.push('stop feed') },
      { name: 'plain' },
    ]);
    await lifecycle.startPlugins();
    expect(ran).toEqual(['start feed']);
    await lifecycle.stopPlugins();
    expect(ran).toEqual(['start feed', 'stop feed']);
  });

  it('runs the hooks in order: the first refusal wins and later plugins are not asked', async () => {
    const asked: string[] = [];
    const refuse = (name: string): OperationPlugin => ({
      name,
      onStart: () => (asked.push(`start ${name}`), new ServiceError('RATE_LIMITED', `${name} says no`)),
      onAdmit: () => (asked.push(`admit ${name}`), new ServiceError('FORBIDDEN', `${name} says no`)),
    });
    const lifecycle = lifecycleOf([refuse('first'), refuse('second')]);
    const started = await lifecycle.start({ principal, transport: 'sse' });
    expect(started).toBeInstanceOf(GraphQLError);
    expect(started?.message).toBe('first says no');
    expect(started?.extensions).toMatchObject({ code: 'RATE_LIMITED', http: { status: 429 } });
    const document = parse('{ a }');
    const admitted = lifecycle.admit({ document, operation: undefined, operationName: null, variables: null, principal, transport: 'http' });
    expect(admitted?.extensions).toMatchObject({ code: 'FORBIDDEN', http: { status: 403 } });
    expect(asked).toEqual(['start first', 'admit first']);
  });

  it('resolves the document through each plugin in turn, and answers a thrown refusal', () => {
    const lifecycle = lifecycleOf([
      { name: 'ids', resolveDocument: (request) => ({ ...request, query: request.documentId === 'q1' ? '{ a }' : request.query }) },
      {
        name: 'trusted',
        resolveDocument: (request) => {
          if (request.query === '{ b }') throw new ServiceError('PERSISTED_QUERY_ONLY', 'not listed');
          return request;
        },
      },
    ]);
    expect(lifecycle.resolve({ documentId: 'q1' })).toMatchObject({ query: '{ a }' });
    const refused = lifecycle.resolve({ query: '{ b }' });
    expect(refused).toBeInstanceOf(GraphQLError);
    expect((refused as GraphQLError).extensions.code).toBe('PERSISTED_QUERY_ONLY');
  });

  it('prepares a streamed operation through every step, and stops at the first that refuses', async () => {
    const lifecycle = lifecycleOf([
      documentCachingPlugin(),
      { name: 'no-b', onAdmit: ({ document }) => (JSON.stringify(document).includes('"b"') ? new ServiceError('FORBIDDEN', 'no b') : undefined) },
    ]);
    const prepared = await lifecycle.prepare({ principal, transport: 'websocket', params: { query: '{ a }' } });
    expect(prepared).toMatchObject({ schema, variableValues: null, operationName: null, contextValue: { who: principal } });
    const again = await lifecycle.prepare({ principal, transport: 'websocket', params: { query: '{ a }' } });
    // One document per text, the caching plugin's: the shared subscription execution relies on it.
    expect((again as { document: unknown }).document).toBe((prepared as { document: unknown }).document);
    expect(await lifecycle.prepare({ principal, transport: 'sse', params: { query: '{ a' } })).toMatchObject([
      { extensions: { code: 'GRAPHQL_PARSE_FAILED' } },
    ]);
    expect(await lifecycle.prepare({ principal, transport: 'sse', params: { query: '{ c }' } })).toMatchObject([
      { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    ]);
    expect(await lifecycle.prepare({ principal, transport: 'sse', params: { query: '{ b }' } })).toMatchObject([{ extensions: { code: 'FORBIDDEN' } }]);
  });

  it("parses and validates between the plugins' hooks: the first kept result answers, every hook after sees the result, a hook that throws reported and skipped", () => {
    failures.length = 0;
    const calls: string[] = [];
    const follows: OperationPlugin = {
      name: 'follows',
      onParse: (text) => ({ done: (result) => void calls.push(`parsed ${text}: ${result instanceof GraphQLError ? result.extensions.code : 'document'}`) }),
      onValidate: () => ({ done: (errors) => void calls.push(`validated: ${errors.map((error) => error.extensions.code).join() || 'valid'}`) }),
    };
    const kept = parse('{ b }');
    const noErrors: GraphQLError[] = [];
    const lifecycle = lifecycleOf([
      { name: 'quiet', onParse: () => undefined, onValidate: () => undefined },
      {
        name: 'broken-before',
        onParse: () => {
          throw new Error('no parse hook');
        },
        onValidate: () => {
          throw new Error('no validate hook');
        },
      },
      follows,
      {
        name: 'keeps',
        onParse: (text) => (text === '{ kept }' ? { kept, done: () => void calls.push('keeps saw it') } : undefined),
        onValidate: (document) => (document === kept ? { kept: noErrors } : undefined),
      },
      { name: 'late', onParse: () => ({ kept: parse('{ a }') }) },
      {
        name: 'broken-after',
        onParse: () => ({
          done: () => {
            throw new Error('no parse end');
          },
        }),
      },
    ]);
    // The first kept result wins: '{ kept }' is never parsed ('late' keeps another document).
    expect(lifecycle.parse('{ kept }')).toBe(kept);
    expect(lifecycle.validate(kept)).toBe(noErrors);
    expect(calls).toEqual(['parsed { kept }: document', 'keeps saw it', 'validated: valid']);
    expect(failures).toEqual(['broken-before onParse: no parse hook', 'broken-after onParse done: no parse end', 'broken-before onValidate: no validate hook']);
    failures.length = 0;
    calls.length = 0;
    const plain = lifecycleOf([follows]);
    const document = plain.parse('{ c }');
    expect(document).not.toBeInstanceOf(GraphQLError);
    expect(plain.validate(document as DocumentNode)).toMatchObject([{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    expect(plain.parse('{ a')).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    expect(calls).toEqual(['parsed { c }: document', 'validated: GRAPHQL_VALIDATION_FAILED', 'parsed { a: GRAPHQL_PARSE_FAILED']);
    expect(failures).toEqual([]);
  });

  it('formats errors through each plugin in turn', () => {
    const lifecycle = lifecycleOf([
      { name: 'upper', formatError: (formatted) => ({ ...formatted, message: formatted.message.toUpperCase() }) },
      { name: 'mark', formatError: (formatted) => ({ ...formatted, extensions: { code: 'X' } }) },
    ]);
    expect(lifecycle.formatError({ message: 'oops' }, new Error('oops'))).toEqual({ message: 'OOPS', extensions: { code: 'X' } });
  });

  it("follows an event with every plugin's observer, each failure reported and dropped on its own", () => {
    failures.length = 0;
    const calls: string[] = [];
    const fails = (what: string) => () => {
      throw new Error(what);
    };
    const lifecycle = lifecycleOf([
      { name: 'quiet', onEvent: () => undefined },
      { name: 'span', onEvent: () => ({ reached: () => void calls.push('span reached'), end: () => void calls.push('span end') }) },
      { name: 'broken-start', onEvent: fails('no start') },
      { name: 'broken-count', onEvent: () => ({ reached: fails('no count'), end: () => void calls.push('broken-count end') }) },
      { name: 'broken-end', onEvent: () => ({ reached: () => void calls.push('broken-end reached'), end: fails('no end') }) },
    ]);
    expect(lifecycleOf([{ name: 'quiet', onEvent: () => undefined }]).observeEvent({})).toBeUndefined();
    const observer = lifecycle.observeEvent({ n: 1 });
    observer?.reached();
    observer?.reached();
    observer?.end();
    expect(calls).toEqual(['span reached', 'broken-end reached', 'span reached', 'broken-end reached', 'span end']);
    expect(failures).toEqual(['broken-start onEvent: no start', 'broken-count reached: no count', 'broken-end end: no end']);
  });

  it('answers an arriving request with the first kept answer, a plugin that throws reported and passed over', () => {
    failures.length = 0;
    const arriving = { principal, method: 'POST', json: { query: '{ a }' }, accept: undefined, contentType: 'application/json; charset=utf-8' };
    const answer = { body: '{}', contentType: 'application/json', headers: {} };
    const other = { body: '{"other":1}', contentType: 'application/json', headers: {} };
    const kept = lifecycleOf([
      { name: 'passes', arrive: () => undefined },
      {
        name: 'broken',
        arrive: () => {
          throw new Error('no arrival');
        },
      },
      { name: 'keeps', arrive: () => answer },
      { name: 'late', arrive: () => other },
    ]);
    expect(kept.arrive(arriving)).toBe(answer);
    expect(failures).toEqual(['broken arrive: no arrival']);
    expect(lifecycleOf([{ name: 'passes', arrive: () => undefined }]).arrive(arriving)).toBeUndefined();
  });

  it("executes between the plugins' execute hooks: each sees the operation before and the result after, in order, a replacement passed on and a failure reported and skipped", async () => {
    failures.length = 0;
    const calls: string[] = [];
    const lifecycle = lifecycleOf([
      { name: 'quiet', onExecute: () => undefined },
      {
        name: 'before-only',
        onExecute: ({ operation, prepared }) => void calls.push(`before ${operation.operation} ${prepared.received.transport}`),
      },
      {
        name: 'broken-before',
        onExecute: () => {
          throw new Error('no start');
        },
      },
      {
        name: 'replaces',
        onExecute: () => ({
          onExecuteDone: (result) => {
            calls.push(`replaces saw ${JSON.stringify(result)}`);
            return { data: { a: 2 } };
          },
        }),
      },
      {
        name: 'broken-after',
        onExecute: () => ({
          onExecuteDone: () => {
            throw new Error('no end');
          },
        }),
      },
      {
        name: 'keeps',
        onExecute: () => ({
          onResult: (result) => void calls.push(`keeps sent ${JSON.stringify(result)}`),
        }),
      },
      {
        name: 'broken-result',
        onExecute: () => ({
          onResult: () => {
            throw new Error('no keep');
          },
        }),
      },
      { name: 'reads', onExecute: () => ({ onExecuteDone: (result) => void calls.push(`reads saw ${JSON.stringify(result)}`) }) },
      { name: 'late', onExecute: () => ({ onExecuteDone: () => ({ data: { a: 4 } }) }) },
    ]);
    const prepared = await lifecycle.prepare({ principal, transport: 'sse', params: { query: '{ a }' } });
    if (Array.isArray(prepared)) throw new Error('expected a prepared operation');
    const result = await lifecycle.execute({ ...prepared, rootValue: { a: 1 } });
    expect(result).toEqual({ data: { a: 4 } });
    // `onResult` sees what is sent: after every replacement, whatever the plugin's place in the list.
    expect(calls).toEqual(['before query sse', 'replaces saw {"data":{"a":1}}', 'reads saw {"data":{"a":2}}', 'keeps sent {"data":{"a":4}}']);
    expect(failures).toEqual(['broken-before onExecute: no start', 'broken-after onExecuteDone: no end', 'broken-result onResult: no keep']);
    // No plugin hooks the step: graphql-js's result as it is.
    const plain = lifecycleOf([]);
    const again = await plain.prepare({ principal, transport: 'http', params: { query: '{ a }' } });
    if (Array.isArray(again)) throw new Error('expected a prepared operation');
    expect(await plain.execute({ ...again, rootValue: { a: 3 } })).toEqual({ data: { a: 3 } });
  });
});
