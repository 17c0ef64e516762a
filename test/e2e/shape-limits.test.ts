/**
 * Shape limits (graphql-armor) on HTTP and WebSocket alike: alias, directive and token floods are
 * refused before execution with their own codes, field suggestions are hidden where configured,
 * and an IDE's introspection query stays within the limits.
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { postGraphQL, wsErrors as overWebSocket, type ClientErrors as Errors } from '../support/graphql.js';
import { startMockClusterService, type MockClusterService } from '../support/mock-service.js';
import { countCreates, type TestService } from '../support/service.js';
import { HS256_ENV } from '../support/tokens.js';

/** Tight limits, suggestions hidden. */
let svc: MockClusterService;
/** Default limits and suggestions (development). */
let open: TestService;
const created = countCreates();

beforeAll(async () => {
  svc = await startMockClusterService('shape', {
    env: { GRAPHQL_MAX_ALIASES: '3', GRAPHQL_MAX_DIRECTIVES: '3', GRAPHQL_MAX_TOKENS: '300', GRAPHQL_FIELD_SUGGESTIONS: 'false' },
    wrapLog: created.wrapLog,
  });
  open = await svc.startAnother('open');
});

afterAll(async () => {
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
      expect(errors[0]).toMatchObject({ message: 'Directives limit of 3 exceeded, found 4.', extensions: { code: 'QUERY_TOO_MANY_DIRECTIVES', maxDirectives: 3 } });
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

  it('keeps an IDE\'s introspection query within the limits', async () => {
    const response = await postGraphQL(svc.url, getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }));
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data?.__schema.queryType).toMatchObject({ name: 'Query' });
  });
});

describe('shape limit configuration', () => {
  it('defaults as the README says, hiding suggestions in production only', () => {
    const base = { KAFKA_BROKERS: '127.0.0.1:9092', ...HS256_ENV };
    const development = loadConfig(base).graphqlShape;
    expect(development).toMatchObject({ maxAliases: 15, maxDirectives: 50, maxTokens: 1000, fieldSuggestions: true });
    expect(loadConfig({ ...base, NODE_ENV: 'production' }).graphqlShape.fieldSuggestions).toBe(false);
    expect(() => loadConfig({ ...base, GRAPHQL_MAX_TOKENS: 'many' })).toThrow(/GRAPHQL_MAX_TOKENS/);
  });
});
