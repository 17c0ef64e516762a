/**
 * Shape limits (graphql-armor) on HTTP and WebSocket alike: alias, directive and token floods are
 * refused before execution with their own codes, field suggestions are hidden where configured,
 * and an IDE's introspection query stays within the limits. The services run without a broker
 * (the pipeline's harness).
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { postGraphQL, sseErrors as overSse, wsErrors as overWebSocket, type ClientErrors as Errors } from '../support/graphql.js';
import { MAX_VALIDATION_ERRORS } from '../../src/graphql/pipeline/operation-lifecycle.js';
import { countCreates, startPipelineService, type TestService } from '../support/service.js';
import { HS256_ENV } from '../support/tokens.js';

/** Tight limits, suggestions hidden. */
let svc: TestService;
/** Default limits and suggestions (development). */
let open: TestService;
/** Default limits in production, as a GraphQL security scanner finds the service deployed. */
let production: TestService;
const created = countCreates();

beforeAll(async () => {
  svc = await startPipelineService({
    env: { GRAPHQL_MAX_ALIASES: '3', GRAPHQL_MAX_DIRECTIVES: '3', GRAPHQL_MAX_TOKENS: '300', GRAPHQL_FIELD_SUGGESTIONS: 'false' },
    wrapLog: created.wrapLog,
  });
  open = await startPipelineService();
  production = await startPipelineService({ env: { NODE_ENV: 'production' } });
});

afterAll(async () => {
  await production?.stop();
  await open?.stop();
  await svc?.stop();
});

/** Posts over HTTP and runs over WebSocket; both answers. */
async function both(url: string, query: string): Promise<{ status: number; http: Errors; ws: Errors }> {
  const response = await postGraphQL(url, query);
  return { status: response.status, http: (response.body.errors ?? []) as Errors, ws: await overWebSocket(url, query) };
}

const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: test(correlationId: "x") { correlationId }`).join(' ')} }`;
const directed = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `t${i}: __typename @skip(if: false)`).join(' ')} }`;

describe('shape limits on both transports', () => {
  it('refuses an alias flood with QUERY_TOO_MANY_ALIASES, before execution', async () => {
    expect(await both(svc.url, aliased(3))).toEqual({ status: 200, http: [], ws: [] });
    const flood = await both(svc.url, aliased(4));
    expect(flood.status).toBe(400);
    for (const errors of [flood.http, flood.ws]) {
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ message: 'Aliases limit of 3 exceeded, found 4.', extensions: { code: 'QUERY_TOO_MANY_ALIASES', maxAliases: 3 } });
    }
    // A mutation over the budget does not run.
    const before = created.count();
    const mutation = await postGraphQL(svc.url, `mutation { ${Array.from({ length: 4 }, (_, i) => `m${i}: startTest { correlationId }`).join(' ')} }`);
    expect(mutation.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_MANY_ALIASES');
    expect(mutation.body.data).toBeUndefined();
    expect(created.count()).toBe(before);
  });

  it('refuses a directive flood with QUERY_TOO_MANY_DIRECTIVES', async () => {
    expect(await both(svc.url, directed(3))).toEqual({ status: 200, http: [], ws: [] });
    const flood = await both(svc.url, directed(4));
    expect(flood.status).toBe(400);
    for (const errors of [flood.http, flood.ws]) {
      expect(errors[0]).toMatchObject({
        message: 'Directives limit of 3 exceeded, found 4.',
        extensions: { code: 'QUERY_TOO_MANY_DIRECTIVES', maxDirectives: 3 },
      });
    }
  });

  it('refuses a token flood with QUERY_TOO_MANY_TOKENS while parsing', async () => {
    const flood = `{ ${'__typename '.repeat(400)}}`;
    const refused = await both(svc.url, flood);
    expect(refused.status).toBe(400);
    for (const errors of [refused.http, refused.ws]) {
      expect(errors[0]).toMatchObject({ message: 'Token limit of 300 exceeded.', extensions: { code: 'QUERY_TOO_MANY_TOKENS', maxTokens: 300 } });
    }
    expect(await both(svc.url, `{ ${'__typename '.repeat(250)}}`)).toMatchObject({ status: 200, http: [], ws: [] });
  });

  it('hides field suggestions where configured, and shows them where not', async () => {
    const typo = '{ tset(correlationId: "x") { correlationId } }';
    const hidden = await both(svc.url, typo);
    expect(hidden.status).toBe(400);
    for (const errors of [hidden.http, hidden.ws]) {
      expect(errors[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(errors[0]?.message).toContain('Cannot query field "tset"');
      expect(errors[0]?.message).not.toMatch(/Did you mean|"test"/);
    }
    const shown = await both(open.url, typo);
    for (const errors of [shown.http, shown.ws]) expect(errors[0]?.message).toContain('Did you mean "test"');
  });

  it("keeps an IDE's introspection query within the limits", async () => {
    const response = await postGraphQL(
      svc.url,
      getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }),
    );
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data?.__schema.queryType).toMatchObject({ name: 'Query' });
  });
});

describe('what a GraphQL security scanner probes, in production, on all three transports', () => {
  /** HTTP's status and errors, and the errors over WebSocket and SSE. */
  async function three(query: string): Promise<{ status: number; transports: Errors[] }> {
    const response = await postGraphQL(production.url, query);
    // SSE's refusal carries its status on the array: only the errors are compared.
    return {
      status: response.status,
      transports: [(response.body.errors ?? []) as Errors, await overWebSocket(production.url, query), [...(await overSse(production.url, query))]],
    };
  }

  it('refuses 101 aliases of __typename with QUERY_TOO_MANY_ALIASES: no field is exempt from the alias budget', async () => {
    const flood = `{ ${Array.from({ length: 101 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const refused = await three(flood);
    expect(refused.status).toBe(400);
    for (const errors of refused.transports) {
      expect(errors).toEqual([
        expect.objectContaining({ message: 'Aliases limit of 15 exceeded, found 101.', extensions: { code: 'QUERY_TOO_MANY_ALIASES', maxAliases: 15 } }),
      ]);
    }
    // Within the budget, aliases of __typename still run.
    const within = await three(`{ ${Array.from({ length: 15 }, (_, i) => `a${i}: __typename`).join(' ')} }`);
    expect(within).toEqual({ status: 200, transports: [[], [], []] });
  });

  it('caps the errors one invalid document produces: ten unknown directives do not answer with ten errors', async () => {
    const repeated = `{ __typename ${'@nope '.repeat(10)}}`;
    const refused = await three(repeated);
    expect(refused.status).toBe(400);
    for (const errors of refused.transports) {
      // The first MAX_VALIDATION_ERRORS, and one saying validation stopped there.
      expect(errors).toHaveLength(MAX_VALIDATION_ERRORS + 1);
      expect(errors.slice(0, MAX_VALIDATION_ERRORS).map((error) => error.message)).toEqual(Array(MAX_VALIDATION_ERRORS).fill('Unknown directive "@nope".'));
      expect(errors.at(-1)).toMatchObject({
        message: 'Too many validation errors, error limit reached. Validation aborted.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
      for (const error of errors) expect(error.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
  });
});

describe('shape limit configuration', () => {
  it('defaults as docs/configuration.md says, hiding suggestions in production only', () => {
    const base = { KAFKA_BROKERS: '127.0.0.1:9092', ...HS256_ENV };
    const development = loadConfig(base).graphqlShape;
    expect(development).toMatchObject({ maxAliases: 15, maxDirectives: 50, maxTokens: 1000, fieldSuggestions: true });
    expect(loadConfig({ ...base, NODE_ENV: 'production' }).graphqlShape.fieldSuggestions).toBe(false);
    expect(() => loadConfig({ ...base, GRAPHQL_MAX_TOKENS: 'many' })).toThrow(/GRAPHQL_MAX_TOKENS/);
  });
});
