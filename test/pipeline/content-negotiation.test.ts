/**
 * Content negotiation on /graphql by the HTTP rules (the order and q-values of `Accept`): urql on
 * its default exchanges and settings (queries as GET, JSON listed before `text/event-stream`) for a
 * query, a mutation and a subscription; Apollo Client 4 (its HttpLink) reading a refused token's
 * code; refusals, 401 included, in the media type the client asked
 * for and with their reason phrase; graphql-sse's single connection mode refused with 405 and a
 * message naming the mode that is served. The service runs without a broker (the pipeline's harness).
 */
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange, type OperationResult } from '@urql/core';
import { createClient as createGraphQLSseClient, type NetworkError } from 'graphql-sse';
import { STATUS_CODES } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incoming, storedTest } from '../log/storage-contract.js';
import { collect, createSseClient, eventually, openEventStream } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken, mintToken } from '../support/tokens.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startPipelineService({ env: { SSE_MAX_STREAMS: '1', GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES: '0' } });
});

afterAll(() => svc?.stop());

const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload final } }`;

/** urql as a new user sets it up: the default exchanges, the default settings, a bearer token. */
async function urqlClient(settings: { fetchSubscriptions?: boolean; token?: string } = {}): Promise<Client> {
  const token = settings.token ?? (await defaultToken());
  return new Client({
    url: `${svc.url}/graphql`,
    exchanges: [cacheExchange, fetchExchange],
    fetchOptions: { headers: { authorization: `Bearer ${token}` } },
    ...(settings.fetchSubscriptions === undefined ? {} : { fetchSubscriptions: settings.fetchSubscriptions }),
  });
}

/** A raw request to /graphql with the default token (unless `token` is null) and the given headers. */
async function request(init: { method?: string; accept?: string; token?: string | null; query?: string; body?: unknown; headers?: Record<string, string> }) {
  const token = init.token === undefined ? await defaultToken() : init.token;
  const search = init.query === undefined ? '' : `?query=${encodeURIComponent(init.query)}`;
  return fetch(`${svc.url}/graphql${search}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.accept === undefined ? {} : { accept: init.accept }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
}

describe('urql on its defaults', () => {
  it('runs a query (a GET, JSON listed first, text/event-stream fourth) and gets JSON back', async () => {
    const client = await urqlClient();
    const seen: string[] = [];
    const fetching = client.query('query Kind { __typename }', {}, { fetch: async (input, init) => record(seen, await fetch(input, init)) }).toPromise();
    const result = await fetching;
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual({ __typename: 'Query' });
    // urql's own default: a query goes as GET, and the answer is JSON (urql's first choice), not a stream.
    expect(seen).toEqual([`GET 200 ${GRAPHQL_RESPONSE_JSON}`]);
  });

  it('runs a mutation (a POST with the same Accept) and gets JSON back', async () => {
    const client = await urqlClient();
    const seen: string[] = [];
    const fetchOptions = { fetch: async (input: RequestInfo | URL, init?: RequestInit) => record(seen, await fetch(input, init)) };
    const result = await client.mutation('mutation Start { startTest { correlationId } }', {}, fetchOptions).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.startTest.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).toEqual([`POST 200 ${GRAPHQL_RESPONSE_JSON}`]);
  });

  it('follows a subscription over its fetch path (text/event-stream first in its Accept) to the final message', async () => {
    const id = await storedTest(svc.log, 'urql', [{ sequence: 1, payload: 'stored' }], 'tester');
    const client = await urqlClient({ fetchSubscriptions: true });
    const results: OperationResult[] = [];
    const { unsubscribe } = client.subscription(FOLLOW, { id }).subscribe((result) => results.push(result));
    try {
      await eventually(() => results.length >= 1, 10_000, 'the stored message');
      await svc.log.append([incoming(id, { sequence: 2, payload: 'final', final: true })]);
      // urql repeats the last result with hasNext: false when the stream ends (after the final message).
      await eventually(() => results.at(-1)?.hasNext === false, 10_000, 'the end of the stream');
    } finally {
      unsubscribe();
    }
    expect(results.every((r) => r.error === undefined)).toBe(true);
    expect(results.filter((r) => r.hasNext).map((r) => r.data?.testMessages.payload)).toEqual(['stored', 'final']);
  });

  it('gets a bad token refused as a GraphQL error it can read: UNAUTHENTICATED', async () => {
    const client = await urqlClient({ token: 'not-a-token' });
    const result = await client.query('query Kind { __typename }', {}).toPromise();
    expect(result.error?.graphQLErrors[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(result.error?.response?.status).toBe(401);
  });
});

describe('Apollo Client 4 on its defaults (HttpLink)', () => {
  const apolloClient = (token: string) =>
    new ApolloClient({ link: new HttpLink({ uri: `${svc.url}/graphql`, headers: { authorization: `Bearer ${token}` } }), cache: new InMemoryCache() });
  // A field the cache cannot answer by itself (it would answer a lone `__typename` without asking).
  const KIND = gql`
    query Missing {
      test(correlationId: "none") {
        correlationId
      }
    }
  `;

  it('runs a query', async () => {
    const result = await apolloClient(await defaultToken()).query({ query: KIND });
    expect(result.data).toEqual({ test: null });
  });

  it('surfaces a bad or expired token as a GraphQL error with UNAUTHENTICATED, not a bare ServerError', async () => {
    for (const token of ['not-a-token', await mintToken({}, { expiresInSeconds: -60 })]) {
      const failure: unknown = await apolloClient(token)
        .query({ query: KIND })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(CombinedGraphQLErrors.is(failure)).toBe(true);
      expect((failure as CombinedGraphQLErrors).errors[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    }
  });
});

/** Notes the method, status and content type of a response urql received, and hands it on. */
function record(seen: string[], response: Response): Response {
  seen.push(`${response.url.includes('?') ? 'GET' : 'POST'} ${response.status} ${response.headers.get('content-type') ?? ''}`);
  return response;
}

describe('Accept, by its order and q-values', () => {
  const query = { query: '{ __typename }' };

  it('answers the first type listed among equals, and the higher q-value first', async () => {
    const cases: Array<[string, string]> = [
      ['application/json, text/event-stream', JSON_TYPE],
      ['text/event-stream, application/json', 'text/event-stream; charset=utf-8'],
      ['text/event-stream;q=0.5, application/graphql-response+json', GRAPHQL_RESPONSE_JSON],
      ['application/json;q=0.2, text/event-stream;q=0.9', 'text/event-stream; charset=utf-8'],
      ['*/*', JSON_TYPE],
    ];
    for (const [accept, contentType] of cases) {
      const response = await request({ accept, body: query });
      await response.text();
      expect([accept, response.status, response.headers.get('content-type')]).toEqual([accept, 200, contentType]);
    }
    // Without Accept, JSON.
    const none = await request({ body: query });
    expect(none.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await none.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('streams a subscription to any Accept that allows text/event-stream, even where JSON comes first', async () => {
    const id = await storedTest(svc.log, 'json-first', [{ sequence: 1, payload: 'only', final: true }], 'tester');
    for (const accept of ['application/json, text/event-stream', '*/*']) {
      const response = await request({ accept, body: { query: FOLLOW, variables: { id } } });
      expect([accept, response.status, response.headers.get('content-type')]).toEqual([accept, 200, 'text/event-stream; charset=utf-8']);
      expect(await response.text()).toContain('"payload":"only"');
    }
    // text/event-stream refused (q=0): a plain HTTP answer, which refuses a subscription.
    const refused = await request({ accept: 'application/json, text/event-stream;q=0', body: { query: FOLLOW, variables: { id } } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('refusals in the media type asked for, with a reason phrase', () => {
  it('answers 401 in application/graphql-response+json when that is what the client prefers (Apollo Client 4)', async () => {
    const accept = 'application/graphql-response+json,application/json;q=0.9';
    for (const token of [null, 'not-a-token', await mintToken({}, { expiresInSeconds: -60 })]) {
      const response = await request({ accept, token, body: { query: '{ __typename }' } });
      expect(response.status).toBe(401);
      expect(response.statusText).toBe('Unauthorized');
      expect(response.headers.get('content-type')).toBe(GRAPHQL_RESPONSE_JSON);
      expect(((await response.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
    }
    const json = await request({ accept: 'application/json', token: null, body: { query: '{ __typename }' } });
    expect(json.headers.get('content-type')).toBe(JSON_TYPE);
  });

  it('answers 403 and a malformed body in the type asked for too', async () => {
    const accept = 'application/graphql-response+json';
    const forbidden = await request({ accept, token: await mintToken({ scope: 'tests:write' }), body: { query: '{ recentTests { totalCount } }' } });
    expect([forbidden.status, forbidden.statusText, forbidden.headers.get('content-type')]).toEqual([403, 'Forbidden', GRAPHQL_RESPONSE_JSON]);
    const malformed = await request({ accept, body: '{"query": ' });
    expect([malformed.status, malformed.statusText, malformed.headers.get('content-type')]).toEqual([400, 'Bad Request', GRAPHQL_RESPONSE_JSON]);
    expect(((await malformed.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('gives every refusal before an event stream opens its reason phrase, in the type asked for', async () => {
    const parse = await request({ accept: 'text/event-stream', body: { query: 'subscription {' } });
    expect([parse.status, parse.statusText, parse.headers.get('content-type')]).toEqual([400, 'Bad Request', JSON_TYPE]);
    const preferred = await request({ accept: 'text/event-stream, application/graphql-response+json;q=0.5', body: { query: 'subscription {' } });
    expect([preferred.status, preferred.statusText, preferred.headers.get('content-type')]).toEqual([400, 'Bad Request', GRAPHQL_RESPONSE_JSON]);
    // The cap (SSE_MAX_STREAMS=1): a 429 with its phrase, which graphql-sse's client shows.
    const id = await storedTest(svc.log, 'cap', [], 'tester');
    const open = await openEventStream(svc.url, FOLLOW, { id });
    const client = createSseClient(svc.url);
    const second = collect(client, FOLLOW, { id });
    const failure = (await second.done.then(
      () => undefined,
      (error: unknown) => error,
    )) as NetworkError | undefined;
    client.dispose();
    open.close();
    expect(failure?.message).toBe(`Server responded with 429: ${STATUS_CODES[429]}`);
  });
});

describe("graphql-sse's single connection mode", () => {
  it('is refused at its reservation with 405 and a message naming the distinct connections mode', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const response = await request({ method, accept: 'application/graphql-response+json' });
      expect([method, response.status, response.statusText, response.headers.get('allow')]).toEqual([method, 405, 'Method Not Allowed', 'GET, POST']);
      expect(response.headers.get('content-type')).toBe(GRAPHQL_RESPONSE_JSON);
      const body = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
      expect(body.errors[0]?.extensions.code).toBe('METHOD_NOT_ALLOWED');
      expect(body.errors[0]?.message).toMatch(/distinct connections mode/);
    }
    // Its own client, as configured for that mode: the reservation fails with the 405 and its phrase.
    const client = createGraphQLSseClient({
      url: `${svc.url}/graphql`,
      singleConnection: true,
      retryAttempts: 0,
      headers: async () => ({ authorization: `Bearer ${await defaultToken()}` }),
    });
    const sub = collect(client, '{ __typename }');
    const failure = (await sub.done.then(
      () => undefined,
      (error: unknown) => error,
    )) as NetworkError | undefined;
    client.dispose();
    expect(failure?.message).toBe('Server responded with 405: Method Not Allowed');
  });
});

describe('a request Apollo Server would not run, answered as it answers one, whatever the operation', () => {
  const body = async (response: Response) => ((await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> }).errors;

  it('answers 406 to an Accept that takes no GraphQL response type, the operation valid or not, and runs neither', async () => {
    for (const query of ['{ __typename }', '{ nonsense }']) {
      const response = await request({ query, accept: 'application/xml' });
      expect([query, response.status, response.headers.get('content-type')]).toEqual([query, 406, JSON_TYPE]);
      expect((await body(response))[0]?.extensions.code).toBe('NOT_ACCEPTABLE');
    }
  });

  it('serves an Accept whose ranges carry parameters, as Apollo Server offers its types with a charset', async () => {
    for (const [accept, type] of [
      ['application/json; charset=utf-8', JSON_TYPE],
      ['application/graphql-response+json;charset=utf-8', GRAPHQL_RESPONSE_JSON],
      ['*/*', JSON_TYPE],
    ] as const) {
      const response = await request({ query: '{ __typename }', accept });
      expect([accept, response.status, response.headers.get('content-type')]).toEqual([accept, 200, type]);
    }
    // Refused, it is answered in the type the range chose too.
    const refused = await request({ query: '{ nonsense }', accept: 'application/graphql-response+json;charset=utf-8' });
    expect([refused.status, refused.headers.get('content-type')]).toEqual([400, GRAPHQL_RESPONSE_JSON]);
  });

  it('answers 415 to a GET whose content type is not JSON, the operation valid or not', async () => {
    for (const query of ['{ __typename }', '{ nonsense }']) {
      const response = await request({ query, headers: { 'content-type': 'text/plain' } });
      expect([query, response.status]).toEqual([query, 415]);
      expect((await body(response))[0]?.extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    for (const contentType of ['application/json;', 'application/json; charset=utf-8', 'Application/JSON'])
      expect([contentType, (await request({ query: '{ __typename }', headers: { 'content-type': contentType } })).status]).toEqual([contentType, 200]);
  });

  it('refuses a request without a document with BAD_REQUEST, over GET and POST', async () => {
    for (const response of [await request({ query: '' }), await request({ body: {} }), await request({ body: { query: '' } })]) {
      expect(response.status).toBe(400);
      expect((await body(response))[0]?.extensions.code).toBe('BAD_REQUEST');
    }
  });

  it('refuses a mutation sent with GET with 405 and Allow: POST before it is admitted, even to a caller who may not run it', async () => {
    const token = await mintToken({ scope: 'tests:read' });
    const response = await request({ query: 'mutation { startTest { correlationId } }', token });
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await body(response))[0]?.extensions.code).toBe('METHOD_NOT_ALLOWED');
  });
});
