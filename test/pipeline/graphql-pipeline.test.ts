/**
 * One operation pipeline for HTTP, WebSocket and SSE: the same refusals with the same codes on
 * every transport, the HTTP-only rules (CSRF and the bearer token, GET, batching, statuses whatever the client accepts),
 * and the error edge masking unexpected errors in production on all three. The services run
 * without a broker (the pipeline's harness): nothing here reads the results topic.
 */
import { getIntrospectionQuery } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { postGraphQL, sseErrors as overSse, wsErrors as overWebSocket } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

let svc: TestService;
/** A second service: production, introspection off, a log that fails for one id. */
let prod: TestService;
const logLines: string[] = [];

/** A log whose reads fail unexpectedly for the id `explode` (a bug or a failing dependency). */
function failing(store: ResultLog): ResultLog {
  return {
    ...store,
    getMany: (ids) => (ids.includes('explode') ? Promise.reject(new Error('connection reset by secret-host:6379')) : store.getMany(ids)),
  };
}

beforeAll(async () => {
  svc = await startPipelineService();
  prod = await startPipelineService({
    env: { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'false' },
    wrapLog: failing,
    logger: pino({ level: 'error' }, { write: (line: string) => void logLines.push(line) }),
  });
});

afterAll(async () => {
  await prod?.stop();
  await svc?.stop();
});

describe('the same refusals on both transports', () => {
  it('refuses a query that does not parse with GRAPHQL_PARSE_FAILED (400 over HTTP)', async () => {
    const http = await postGraphQL(svc.url, '{ test(correlationId: "x") { ');
    expect(http.status).toBe(400);
    expect(http.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(http.body.data).toBeUndefined();
    const ws = await overWebSocket(svc.url, '{ test(correlationId: "x") { ');
    expect(ws[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    const sse = await overSse(svc.url, '{ test(correlationId: "x") { ');
    expect(sse.status).toBe(400);
    expect(sse[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('refuses a document whose operation to run is ambiguous, before execution, with one code on every transport', async () => {
    const document = 'query A { __typename } query B { __typename }';
    // The code Apollo Server used for it over HTTP, now the lifecycle's on every transport.
    const http = await postGraphQL(svc.url, document);
    expect(http.status).toBe(400);
    expect(http.body.errors?.[0]?.extensions?.code).toBe('OPERATION_RESOLUTION_FAILURE');
    const ws = await overWebSocket(svc.url, document);
    expect(ws[0]?.extensions?.code).toBe('OPERATION_RESOLUTION_FAILURE');
    expect((await overSse(svc.url, document))[0]?.extensions?.code).toBe('OPERATION_RESOLUTION_FAILURE');
  });

  it('keeps 400 for refusals when the client accepts only application/json', async () => {
    const response = await postGraphQL(svc.url, '{ nonsense }', undefined, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses introspection on both transports where it is switched off, and allows it where it is on', async () => {
    const http = await postGraphQL(prod.url, getIntrospectionQuery());
    expect(http.status).toBe(400);
    expect(http.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(http.body.errors?.[0]?.message).toMatch(/introspection/i);
    const ws = await overWebSocket(prod.url, '{ __schema { queryType { name } } }');
    expect(ws[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await overWebSocket(svc.url, '{ __schema { queryType { name } } }')).toEqual([]);
    expect((await overSse(prod.url, '{ __schema { queryType { name } } }'))[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await overSse(svc.url, '{ __schema { queryType { name } } }')).toEqual([]);
  });

  it('refuses variables the client got wrong with BAD_USER_INPUT on every transport, before anything runs (400 over HTTP and SSE)', async () => {
    const cases: Array<[string, Record<string, unknown> | undefined]> = [
      ['query($b: Boolean = true) { __typename @include(if: $b) }', { b: 1 }],
      ['query($id: ID!) { test(correlationId: $id) { correlationId } }', undefined],
      ['subscription($id: ID! = "x") { testMessages(correlationId: $id) { cursor } }', { id: null }],
      ['query($n: Int) { recentTests(first: $n) { pageInfo { hasNextPage } } }', { n: 'twenty' }],
    ];
    for (const [query, variables] of cases) {
      if (!query.startsWith('subscription')) {
        const http = await postGraphQL(svc.url, query, variables);
        expect(http.status, query).toBe(400);
        expect(
          http.body.errors?.map((e) => e.extensions?.code),
          query,
        ).toEqual(['BAD_USER_INPUT']);
      }
      const ws = await overWebSocket(svc.url, query, variables);
      expect(
        ws.map((e) => e.extensions?.code),
        query,
      ).toEqual(['BAD_USER_INPUT']);
      const sse = await overSse(svc.url, query, variables);
      expect(sse.status, query).toBe(400);
      expect(
        sse.map((e) => e.extensions?.code),
        query,
      ).toEqual(['BAD_USER_INPUT']);
      expect(sse[0]?.message, query).toBe(ws[0]?.message);
    }
  });

  it("answers an argument the client's variables left null with BAD_USER_INPUT on every transport, not as the service's failure", async () => {
    for (const query of [
      'query($ids: [ID!] = ["a"]) { tests(correlationIds: $ids) { correlationId } }',
      'query($id: ID = "a") { tests(correlationIds: [$id]) { correlationId } }',
    ]) {
      const variables = { ids: null, id: null };
      const http = await postGraphQL(svc.url, query, variables);
      expect(
        http.body.errors?.map((e) => [e.extensions?.code, e.path]),
        query,
      ).toEqual([['BAD_USER_INPUT', ['tests']]]);
      const ws = await overWebSocket(svc.url, query, variables);
      expect(
        ws.map((e) => e.extensions?.code),
        query,
      ).toEqual(['BAD_USER_INPUT']);
      const sse = await overSse(svc.url, query, variables);
      expect(
        sse.map((e) => e.extensions?.code),
        query,
      ).toEqual(['BAD_USER_INPUT']);
    }
  });

  it("never sends the pipeline's internal extensions (HTTP status, headers) to WebSocket and SSE clients", async () => {
    for (const [error] of [await overWebSocket(svc.url, '{ nonsense }'), await overSse(svc.url, '{ nonsense }')]) {
      expect(error?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(error?.extensions).not.toHaveProperty('http');
    }
  });
});

describe('HTTP transport rules', () => {
  const get = async (query: string, headers: Record<string, string> = {}) =>
    fetch(`${svc.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { authorization: `Bearer ${await defaultToken()}`, ...headers } });

  // The one credential /graphql takes is a bearer token in Authorization, a header a browser sends
  // cross-site only after a CORS preflight: it counts as a preflight-forcing header (apollo-server.ts),
  // so a GET as urql sends it by default is served, and a forged request, which cannot carry it, is
  // refused before any operation.
  it('serves a GET that carries only its bearer token, and refuses one without a token before any operation (CSRF)', async () => {
    const bearerOnly = await get('{ __typename }');
    expect(bearerOnly.status).toBe(200);
    expect(await bearerOnly.json()).toEqual({ data: { __typename: 'Query' } });
    const forged = await fetch(`${svc.url}/graphql?query=${encodeURIComponent('{ __typename }')}`);
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a cross-site form post (text/plain) without the header', async () => {
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await defaultToken()}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(400);
  });

  it('refuses a mutation over GET', async () => {
    const response = await get('mutation { startTest { correlationId } }', { 'apollo-require-preflight': 'true' });
    expect(response.status).toBe(405);
  });

  it('refuses a batch of operations', async () => {
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await defaultToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(response.status).toBe(400);
  });

  it('refuses a subscription over plain HTTP with BAD_USER_INPUT: subscriptions are served over WebSocket and SSE', async () => {
    const response = await postGraphQL(svc.url, 'subscription { testMessages(correlationId: "x") { id } }', undefined, {
      headers: { accept: 'application/graphql-response+json, application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('the error edge in production', () => {
  it('masks an unexpected error on both transports, and logs it', async () => {
    const query = '{ test(correlationId: "explode") { correlationId } }';
    const http = await postGraphQL(prod.url, query);
    expect(http.body.data).toEqual({ test: null });
    expect(http.body.errors?.[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' }, path: ['test'] });
    expect(JSON.stringify(http.body)).not.toContain('secret-host');
    const ws = await overWebSocket(prod.url, query);
    expect(ws[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(JSON.stringify(ws)).not.toContain('secret-host');
    const sse = await overSse(prod.url, query);
    expect(sse[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String) } });
    expect(JSON.stringify(sse)).not.toContain('secret-host');
    expect(logLines.filter((line) => line.includes('connection reset by secret-host'))).toHaveLength(3);
  });

  it("carries the request id the HTTP edge set once (the caller's X-Request-Id) into the masked error and its log line", async () => {
    const query = '{ test(correlationId: "explode") { correlationId } }';
    const response = await postGraphQL(prod.url, query, undefined, { headers: { 'x-request-id': 'edge-id-7' } });
    expect(response.headers.get('x-request-id')).toBe('edge-id-7');
    expect(response.body.errors?.[0]).toMatchObject({
      message: 'Internal server error',
      extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'edge-id-7' },
    });
    expect(logLines.filter((line) => line.includes('connection reset by secret-host') && line.includes('"requestId":"edge-id-7"'))).toHaveLength(1);
  });

  it('keeps the message and code of an expected error', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `id-${i}`);
    const response = await postGraphQL(prod.url, 'query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId } }', { ids: many });
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors?.[0]?.message).not.toBe('Internal server error');
  });
});
