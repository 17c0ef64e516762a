/**
 * Rate limits over real connections, per principal, on one service's memory budgets: on /tests and
 * /graphql (429, Retry-After, RATE_LIMITED), on WebSocket, SSE and multipart operations (one budget) and new
 * WebSocket connections (close code 4429). The service runs without a broker (the pipeline's
 * harness); the issuer's limits and the budget two replicas share through Redis are in
 * e2e/rate-limits.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, createWsClient, postGraphQL, sseErrors } from '../support/graphql.js';
import { expectRefusedProblem, readTest } from '../support/rate-limits.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

let svc: TestService;

const limits = {
  RATE_LIMITS: 'on',
  RATE_LIMIT_API_PER_MINUTE: '3',
  RATE_LIMIT_SUBSCRIBES_PER_MINUTE: '2',
  RATE_LIMIT_WS_CONNECTIONS_PER_MINUTE: '2',
  RATE_LIMIT_AUTH_PER_MINUTE: '3',
};

beforeAll(async () => {
  svc = await startPipelineService({ env: limits });
});

afterAll(async () => {
  await svc?.stop();
});

describe('per principal on HTTP', () => {
  it('answers 429 with Retry-After and RATE_LIMITED on /tests and /graphql once the budget is spent', async () => {
    const token = await mintToken({ sub: `http-${randomUUID()}` });
    for (let i = 0; i < 3; i += 1) expect((await readTest(svc.url, token)).status).toBe(404);
    await expectRefusedProblem(await readTest(svc.url, token));

    // /graphql draws on the same budget and answers in GraphQL's shape.
    const graphql = await postGraphQL(svc.url, '{ __typename }', undefined, { token });
    expect(graphql.status).toBe(429);
    expect(Number(graphql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(graphql.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(graphql.body.errors?.[0]?.extensions?.retryAfterSeconds).toBe(Number(graphql.headers.get('retry-after')));

    // Another principal has a budget of its own.
    const other = await mintToken({ sub: `http-${randomUUID()}` });
    expect((await postGraphQL(svc.url, '{ __typename }', undefined, { token: other })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('does not charge requests whose token is refused', async () => {
    for (let i = 0; i < 5; i += 1) expect((await readTest(svc.url, 'not-a-token')).status).toBe(401);
  });
});

describe('per principal on WebSocket', () => {
  it('refuses an operation over the budget with a RATE_LIMITED GraphQL error on the socket', async () => {
    const token = await mintToken({ sub: `ws-ops-${randomUUID()}` });
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
    try {
      // Started together, so the three operations share one connection (and one connection's budget).
      const runs = [0, 1, 2].map(() => collect(client, '{ __typename }'));
      const outcomes = await Promise.all(
        runs.map((run) =>
          run.done.then(
            () => null,
            (e: unknown) => e as Array<{ extensions?: Record<string, unknown> }>,
          ),
        ),
      );
      expect(runs.filter((run) => run.results.length === 1 && run.results[0]?.data?.__typename === 'Query')).toHaveLength(2);
      const refused = outcomes.filter((outcome) => outcome !== null);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
      expect(refused[0]?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    } finally {
      await client.dispose();
    }
  });

  it('counts SSE operations against the same budget: past it an event stream is refused with 429 and RATE_LIMITED', async () => {
    const token = await mintToken({ sub: `sse-ops-${randomUUID()}` });
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
    await collect(client, '{ __typename }').done;
    await client.dispose();
    expect(await sseErrors(svc.url, '{ __typename }', undefined, token)).toEqual([]);
    const refused = await sseErrors(svc.url, '{ __typename }', undefined, token);
    expect(refused.status).toBe(429);
    expect(refused[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused[0]?.extensions?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('counts multipart HTTP subscriptions against the same budget: past it one is refused with 429, Retry-After and RATE_LIMITED', async () => {
    const token = await mintToken({ sub: `multipart-ops-${randomUUID()}` });
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
    await collect(client, '{ __typename }').done;
    await client.dispose();
    const subscribe = (signal?: AbortSignal) =>
      fetch(`${svc.url}/graphql`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json',
        },
        body: JSON.stringify({ query: 'subscription { testChanges { kind } }' }),
        ...(signal === undefined ? {} : { signal }),
      });
    const open = new AbortController();
    const first = await subscribe(open.signal);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    open.abort();
    const refused = await subscribe();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]?.extensions.code).toBe('RATE_LIMITED');
  });

  it('closes the connection over the budget of new connections with 4429', async () => {
    const token = await mintToken({ sub: `ws-conn-${randomUUID()}` });
    const closes: number[] = [];
    const clients = [0, 1, 2].map(() =>
      createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` }, onClose: (e) => closes.push(e.code) }),
    );
    try {
      for (const client of clients.slice(0, 2)) {
        const run = collect(client, '{ __typename }');
        await run.done;
        expect(run.results).toEqual([{ data: { __typename: 'Query' } }]);
      }
      const refused = collect(clients[2]!, '{ __typename }');
      const error = await refused.done.then(
        () => undefined,
        (e: unknown) => e as { code?: number; reason?: string },
      );
      expect(error?.code).toBe(4429);
      expect(String(error?.reason)).toMatch(/Too many connections/);
      expect(closes).toContain(4429);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });
});
