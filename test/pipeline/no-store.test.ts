/**
 * Nothing the API answers on /graphql or /tests may be kept by a cache (docs/api.md): an answer
 * speaks of a test at one moment and to one caller, and a refusal a shared cache kept would
 * outlive its cause (a 404 is cacheable by default, RFC 9111 section 4.2.2: a test started a
 * moment later would stay "not found" behind it). So every kind of answer carries
 * `Cache-Control: no-store`: results, refusals before an operation runs, the streams of each HTTP
 * transport, and every problem document, also of a path that does not exist. The service runs
 * without a broker (the pipeline's harness).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken, mintToken } from '../support/tokens.js';

let svc: TestService;
let started: string;

beforeAll(async () => {
  svc = await startPipelineService();
  started = (await svc.log.create({ correlationId: '6a1f2c3e-0000-4000-8000-00000000c0de', input: null, owner: 'tester' })).correlationId;
});

afterAll(() => svc?.stop());

const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }';

/** One request: the path, and what to send (the default token unless `token` says otherwise). */
interface Asked {
  readonly method?: string;
  readonly path: string;
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

const json = (value: unknown) => JSON.stringify(value);

/** Every kind of answer, each with the status it is known by (so a case that stops answering as meant fails too). */
const CASES: ReadonlyArray<readonly [string, number, () => Promise<Asked>]> = [
  ['a query', 200, async () => ({ method: 'POST', path: '/graphql', body: json({ query: '{ __typename }' }) })],
  ['a query by GET', 200, async () => ({ path: `/graphql?query=${encodeURIComponent('{ __typename }')}` })],
  ['a query without a token', 401, async () => ({ method: 'POST', path: '/graphql', token: null, body: json({ query: '{ __typename }' }) })],
  ['a body that is not JSON', 400, async () => ({ method: 'POST', path: '/graphql', body: '{' })],
  ['a document that does not validate', 400, async () => ({ method: 'POST', path: '/graphql', body: json({ query: '{ nonsense }' }) })],
  [
    'a subscription over SSE',
    200,
    async () => ({ method: 'POST', path: '/graphql', headers: { accept: 'text/event-stream' }, body: json({ query: FOLLOW, variables: { id: started } }) }),
  ],
  [
    'an SSE subscription without a token',
    401,
    async () => ({
      method: 'POST',
      path: '/graphql',
      token: null,
      headers: { accept: 'text/event-stream' },
      body: json({ query: FOLLOW, variables: { id: started } }),
    }),
  ],
  [
    'a multipart subscription',
    200,
    async () => ({
      method: 'POST',
      path: '/graphql',
      headers: { accept: 'multipart/mixed;subscriptionSpec="1.0",application/json' },
      body: json({ query: FOLLOW, variables: { id: started } }),
    }),
  ],
  ['a start', 202, async () => ({ method: 'POST', path: '/tests', body: json({ name: 'cache' }) })],
  ['a start whose body is not an object', 400, async () => ({ method: 'POST', path: '/tests', body: '[1]' })],
  ['a start whose body is too large', 413, async () => ({ method: 'POST', path: '/tests', body: json({ name: 'x'.repeat(200_000) }) })],
  ['a test', 200, async () => ({ path: `/tests/${started}` })],
  ['a test that is not there', 404, async () => ({ path: '/tests/8b2e4d6f-0000-4000-8000-000000000404' })],
  ['a test without a token', 401, async () => ({ path: `/tests/${started}`, token: null })],
  ['a test without the scope to read it', 403, async () => ({ path: `/tests/${started}`, token: await mintToken({ scope: 'tests:write' }) })],
  ['a path that does not exist', 404, async () => ({ path: '/nothing-here' })],
];

it.each(CASES)('answers %s (%i) with Cache-Control: no-store', async (_name, status, ask) => {
  const asked = await ask();
  const token = asked.token === undefined ? await defaultToken() : asked.token;
  const abort = new AbortController();
  const response = await fetch(`${svc.url}${asked.path}`, {
    method: asked.method ?? 'GET',
    signal: abort.signal,
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...asked.headers,
    },
    body: asked.body,
  });
  // A stream's head is all this reads: it is not waited out.
  abort.abort();
  expect(response.status).toBe(status);
  expect(
    response.headers
      .get('cache-control')
      ?.split(',')
      .map((directive) => directive.trim()),
  ).toContain('no-store');
});
