/**
 * Scopes, ownership and the WebSocket's own protections, with real HS256 tokens over real HTTP
 * and WebSocket connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startMockClusterService, type MockClusterService } from '../support/mock-service.js';
import { authedFetch, mintToken } from '../support/tokens.js';

let svc: MockClusterService;

beforeAll(async () => {
  svc = await startMockClusterService('access', {
    env: { WS_MAX_SUBSCRIPTIONS: '2', WS_MAX_MESSAGE_BYTES: '2048', WS_ALLOWED_ORIGINS: 'https://dashboard.example', AUTH_CLOCK_TOLERANCE_SECONDS: '1' },
  });
});

afterAll(() => svc?.stop());

const token = (sub: string, scope: string, expiresInSeconds = 300) => mintToken({ sub, scope }, { expiresInSeconds });
const START = `mutation { startTest(input: { name: "owned" }) { correlationId } }`;
const READ = `query($id: ID!) { test(correlationId: $id) { correlationId } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;

async function startAs(sub: string): Promise<string> {
  const response = await postGraphQL(svc.url, START, undefined, { token: await token(sub, 'tests:read tests:write') });
  return response.body.data?.startTest.correlationId as string;
}

async function wsOutcome(tokenValue: string, query: string, variables?: Record<string, unknown>) {
  const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${tokenValue}` } });
  const sub = collect(client, query, variables);
  const outcome = await sub.done.then(
    () => ({ results: sub.results }),
    (error: unknown) => ({ error }),
  );
  await client.dispose();
  return outcome as { results?: typeof sub.results; error?: Array<{ extensions?: Record<string, unknown> }> };
}

describe('scopes', () => {
  it('refuses reads without tests:read: 403 insufficient_scope over HTTP and REST, FORBIDDEN over WebSocket', async () => {
    const writeOnly = await token('writer', 'tests:write');
    const http = await postGraphQL(svc.url, READ, { id: 'x' }, { token: writeOnly });
    expect(http.status).toBe(403);
    expect(http.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", .*scope="tests:read"$/);
    expect(http.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScope: 'tests:read' });
    expect(http.body.data).toBeUndefined();

    const rest = await authedFetch(`${svc.url}/tests/x`, { token: writeOnly });
    expect(rest.status).toBe(403);
    expect(rest.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(await rest.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });

    const ws = await wsOutcome(writeOnly, FOLLOW, { id: 'x' });
    expect(ws.error?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('refuses starting a test without tests:write, and starts nothing', async () => {
    const readOnly = await token('reader', 'tests:read');
    const http = await postGraphQL(svc.url, START, undefined, { token: readOnly });
    expect(http.status).toBe(403);
    expect(http.headers.get('www-authenticate')).toContain('scope="tests:write"');
    expect(http.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const rest = await authedFetch(`${svc.url}/tests`, { method: 'POST', token: readOnly });
    expect(rest.status).toBe(403);
    const ws = await wsOutcome(readOnly, START);
    expect(ws.error?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('refuses a missing token with 401 and a Bearer challenge on every route but health', async () => {
    const graphql = await postGraphQL(svc.url, '{ __typename }', undefined, { token: null });
    expect(graphql.status).toBe(401);
    expect(graphql.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    for (const [method, path] of [
      ['GET', '/tests/x'],
      ['POST', '/tests'],
    ] as const) {
      const response = await fetch(`${svc.url}${path}`, { method });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    const basic = await fetch(`${svc.url}/tests/x`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(401);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });
});

describe('ownership', () => {
  it("answers another subject's test exactly like an unknown one, everywhere", async () => {
    const id = await startAs('alice');
    const bob = await token('bob', 'tests:read tests:write');
    const alice = await token('alice', 'tests:read');

    expect((await postGraphQL(svc.url, READ, { id }, { token: alice })).body.data?.test).toEqual({ correlationId: id });
    expect((await postGraphQL(svc.url, READ, { id }, { token: bob })).body).toEqual({ data: { test: null } });
    const many = await postGraphQL(
      svc.url,
      `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId } }`,
      { ids: [id, await startAs('bob')] },
      { token: bob },
    );
    expect(many.body.data?.tests[0]).toBeNull();
    expect(many.body.data?.tests[1]).not.toBeNull();

    const rest = await authedFetch(`${svc.url}/tests/${id}`, { token: bob });
    const unknown = await authedFetch(`${svc.url}/tests/no-such-test`, { token: bob });
    expect(rest.status).toBe(404);
    expect(((await rest.json()) as { code: string }).code).toBe(((await unknown.json()) as { code: string }).code);

    const ws = await wsOutcome(bob, FOLLOW, { id });
    expect(ws.results?.[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('lets the admin scope read any test', async () => {
    const id = await startAs('alice');
    const admin = await token('operator', 'tests:read tests:admin');
    expect((await postGraphQL(svc.url, READ, { id }, { token: admin })).body.data?.test).toEqual({ correlationId: id });
    expect((await authedFetch(`${svc.url}/tests/${id}`, { token: admin })).status).toBe(200);
  });
});

describe('WebSocket protections', () => {
  it('closes a live subscription when its token expires (4403, reason says so)', async () => {
    const id = await startAs('tester');
    const shortLived = await token('tester', 'tests:read', 2);
    let closed: { code: number; reason: string } | undefined;
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${shortLived}` }, onClose: (e) => (closed = e) });
    const sub = collect(client, FOLLOW, { id });
    const started = Date.now();
    await sub.done.catch(() => undefined);
    await client.dispose();
    expect(closed).toEqual({ code: 4403, reason: 'Forbidden: access token expired' });
    // 2 s of lifetime plus 1 s of clock tolerance, then closed.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('closes with 4403 for a missing token, and with 4401 for an operation sent before connection_init', async () => {
    let closed: { code: number; reason: string } | undefined;
    const client = createWsClient(svc.url, { connectionParams: {}, onClose: (e) => (closed = e) });
    await collect(client, '{ __typename }').done.catch(() => undefined);
    await client.dispose();
    expect(closed?.code).toBe(4403);
    expect(closed?.reason).toContain('no bearer token');

    const raw = new WebSocket(`${svc.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve) => raw.once('open', resolve));
    raw.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } }));
    const [code] = (await new Promise((resolve) => raw.once('close', (c, r) => resolve([c, String(r)])))) as [number, string];
    expect(code).toBe(4401);
  });

  it('checks Origin on the upgrade: foreign origins are refused, own and allowed ones pass', async () => {
    const url = `${svc.url.replace('http', 'ws')}/graphql`;
    const attempt = (origin: string) =>
      new Promise<number | 'open'>((resolve) => {
        const ws = new WebSocket(url, 'graphql-transport-ws', { headers: { origin } });
        ws.once('open', () => (ws.close(), resolve('open')));
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', () => undefined);
      });
    expect(await attempt('https://evil.example')).toBe(403);
    expect(await attempt('https://dashboard.example')).toBe('open');
    expect(await attempt(svc.url)).toBe('open');
  });

  it('caps operations per connection and the size of a message', async () => {
    const id = await startAs('tester');
    const client = createWsClient(svc.url);
    const first = collect(client, FOLLOW, { id });
    const second = collect(client, FOLLOW, { id });
    const third = collect(client, FOLLOW, { id });
    const error = await third.done.then(
      () => undefined,
      (e: unknown) => e as Array<{ extensions?: { code?: string } }>,
    );
    expect(error?.[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    first.unsubscribe();
    second.unsubscribe();
    await client.dispose();

    let closed: { code: number; reason: string } | undefined;
    const big = createWsClient(svc.url, { onClose: (e) => (closed = e) });
    await collect(big, `{ __typename ${' '.repeat(4096)} }`).done.catch(() => undefined);
    await big.dispose();
    expect(closed?.code).toBe(1009);
  });
});
