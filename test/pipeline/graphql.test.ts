/**
 * GraphQL rules over both transports: per-request DataLoader batching, depth and cost limits on
 * HTTP and WebSocket, validation before execution, introspection, and no caching by URL. The
 * service runs without a broker (the pipeline's harness).
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';

let svc: TestService;
const calls = { getMany: [] as Array<readonly string[]>, get: 0, create: 0 };
const startedCount = () => calls.create;

function counting(store: ResultLog): ResultLog {
  return {
    ...store,
    getMany: (ids) => {
      calls.getMany.push(ids);
      return store.getMany(ids);
    },
    get: (id) => {
      calls.get += 1;
      return store.get(id);
    },
    create: (test) => {
      calls.create += 1;
      return store.create(test);
    },
  };
}

beforeAll(async () => {
  svc = await startPipelineService({
    // Every request executes here, response cache off: the loader tests count each request's log
    // calls (e2e/response-cache.test.ts covers the cache).
    env: { GRAPHQL_MAX_DEPTH: '4', GRAPHQL_MAX_COST: '2000', GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES: '0' },
    wrapLog: counting,
  });
});

afterAll(async () => {
  await svc?.stop();
});

const ids = async (n: number) => {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((await svc.log.create({ correlationId: `batch-${Date.now()}-${i}`, input: { i }, owner: 'tester' })).correlationId);
  return out;
};

describe('DataLoader batching', () => {
  it('loads a tests query for 50 ids with one batched store call', async () => {
    const wanted = await ids(50);
    calls.getMany.length = 0;
    calls.get = 0;
    const response = await postGraphQL(svc.url, `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount } }`, {
      ids: [...wanted, 'unknown'],
    });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data?.tests).toHaveLength(51);
    expect(response.body.data?.tests.at(-1)).toBeNull();
    expect(response.body.data?.tests[7].correlationId).toBe(wanted[7]);
    expect(calls.getMany).toHaveLength(1);
    expect(calls.getMany[0]).toHaveLength(51);
    expect(calls.get).toBe(0);
  });

  it('batches separate test fields of one operation, and never shares a loader between requests', async () => {
    const [a, b] = await ids(2);
    calls.getMany.length = 0;
    const query = `query($a: ID!, $b: ID!) { x: test(correlationId: $a) { correlationId } y: test(correlationId: $b) { correlationId } z: test(correlationId: $a) { status } }`;
    await postGraphQL(svc.url, query, { a, b });
    expect(calls.getMany).toEqual([[a, b]]);
    // A second request loads again: nothing was cached across requests.
    await postGraphQL(svc.url, query, { a, b });
    expect(calls.getMany).toHaveLength(2);
  });

  it('refuses more than 100 ids with BAD_USER_INPUT', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `id-${i}`);
    const response = await postGraphQL(svc.url, `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId } }`, { ids: many });
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

const TOO_DEEP = `mutation { startTest { test { messages { edges { node { id } } } } } }`;
const COSTLY = `query($ids: [ID!]!) { tests(correlationIds: $ids) { messages(first: 100) { nodes { id payload } } } }`;

describe('operation limits over HTTP', () => {
  it('accepts an operation within the depth budget', async () => {
    const response = await postGraphQL(svc.url, `{ test(correlationId: "x") { messages { nodes { id } } } }`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { test: null } });
  });

  it('refuses an operation deeper than the budget with QUERY_TOO_DEEP, before execution', async () => {
    // Depth counts nested fields below the root field: this one reaches 4, the budget.
    const atBudget = await postGraphQL(svc.url, `{ test(correlationId: "x") { messages { edges { node { id } } } } }`);
    expect(atBudget.status).toBe(200);
    expect(atBudget.body.errors).toBeUndefined();
    // Depth 5: refused, and the mutation does not run (no test is started).
    const startedBefore = startedCount();
    const tooDeep = await postGraphQL(svc.url, TOO_DEEP);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', maxDepth: 4 });
    expect(tooDeep.body.data).toBeUndefined();
    expect(startedCount()).toBe(startedBefore);
  });

  it('refuses an operation over the cost budget with QUERY_TOO_COMPLEX, counting list sizes', async () => {
    const few = await postGraphQL(svc.url, COSTLY, { ids: ['a'] });
    expect(few.status).toBe(200);
    const many = await postGraphQL(svc.url, COSTLY, { ids: Array.from({ length: 30 }, (_, i) => `c-${i}`) });
    expect(many.status).toBe(400);
    expect(many.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', maxCost: 2000 });
    expect(many.body.errors?.[0]?.extensions?.cost).toBeGreaterThan(2000);
  });

  it('fails validation before execution for a field absent from the schema', async () => {
    const response = await postGraphQL(svc.url, `{ test(correlationId: "x") { correlationId nonsense } }`);
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(response.body.errors?.[0]?.message).toContain('nonsense');
  });

  it('serves introspection within the limits, for GraphQL IDEs', async () => {
    const response = await postGraphQL(svc.url, getIntrospectionQuery());
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    const types = (response.body.data?.__schema.types as Array<{ name: string; description: string | null }>).filter((t) => !t.name.startsWith('__'));
    expect(types.map((t) => t.name)).toEqual(expect.arrayContaining(['Test', 'TestMessage', 'TestStatus', 'StartTestInput', 'JSON', 'DateTime']));
  });

  it('marks responses as not cacheable', async () => {
    const response = await postGraphQL(svc.url, `{ __typename }`);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('operation limits over WebSocket', () => {
  const error = async (query: string, variables?: Record<string, unknown>) => {
    const client = createWsClient(svc.url);
    const sub = collect(client, query, variables);
    const outcome = await sub.done.then(
      () => ({ completed: true }),
      (e: unknown) => e,
    );
    await client.dispose();
    return outcome as Array<{ message: string; extensions?: Record<string, unknown> }>;
  };

  it('refuses a too deep operation with QUERY_TOO_DEEP, before execution', async () => {
    const startedBefore = startedCount();
    const deep = await error(TOO_DEEP);
    expect(deep[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', maxDepth: 4 });
    expect(startedCount()).toBe(startedBefore);
  });

  it('refuses a document whose operation to run is ambiguous', async () => {
    const errors = await error(`subscription A { testMessages(correlationId: "x") { id } } query B { __typename }`);
    expect(errors[0]?.extensions?.code).toBe('OPERATION_RESOLUTION_FAILURE');
  });

  it('refuses a too costly operation with QUERY_TOO_COMPLEX', async () => {
    const errors = await error(COSTLY, { ids: Array.from({ length: 30 }, (_, i) => `c-${i}`) });
    expect(errors[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
  });

  it('refuses an unknown field with GRAPHQL_VALIDATION_FAILED', async () => {
    const errors = await error(`subscription { testMessages(correlationId: "x") { nonsense } }`);
    expect(errors[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('runs queries within the budget', async () => {
    const client = createWsClient(svc.url);
    const sub = collect(client, `{ test(correlationId: "x") { correlationId } }`);
    await sub.done;
    await client.dispose();
    expect(sub.results).toEqual([{ data: { test: null } }]);
  });
});
