/**
 * Rate limits over real connections: per principal on /tests and /graphql (429, Retry-After,
 * RATE_LIMITED), on WebSocket and SSE operations (one budget) and new WebSocket connections (close
 * code 4429), per client IP on the embedded issuer's token endpoint and login form, and one budget
 * shared by two replicas through Redis.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createWsClient, postGraphQL, sseErrors } from '../support/graphql.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const topics = uniqueTopics('ratelimit');
const redisPrefix = `ratelimit-${randomUUID().slice(0, 8)}`;
let cluster: MockCluster;
let svc: TestService;
let issuer: TestService;
let replicaA: TestService;
let replicaB: TestService;
let dir: string;

const limits = {
  RATE_LIMITS: 'on',
  RATE_LIMIT_API_PER_MINUTE: '3',
  RATE_LIMIT_SUBSCRIBES_PER_MINUTE: '2',
  RATE_LIMIT_WS_CONNECTIONS_PER_MINUTE: '2',
  RATE_LIMIT_AUTH_PER_MINUTE: '3',
};

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  const kafka = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests };
  svc = await startTestService({ brokers: cluster.bootstrapServers, env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-mem`, ...limits } });
  const shared = { ...kafka, ...limits, RATE_LIMIT_API_PER_MINUTE: '4', STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix };
  replicaA = await startTestService({ brokers: cluster.bootstrapServers, env: { ...shared, KAFKA_GROUP_ID: `${topics.group}-a` } });
  // B keeps its results in memory and only its budgets in Redis: each part chooses its store.
  replicaB = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { ...shared, STATE_STORE: 'memory', RATE_LIMITS_STORE: 'redis', KAFKA_GROUP_ID: `${topics.group}-b` },
  });
  dir = await mkdtemp(join(tmpdir(), 'rcs-ratelimit-'));
  await writeFile(
    join(dir, 'clients.json'),
    JSON.stringify([{ client_id: 'machine', client_secret: 'machine-secret-of-some-length', grant_types: ['client_credentials'], redirect_uris: [] }]),
  );
  await writeFile(join(dir, 'users.json'), JSON.stringify([]));
  issuer = await startTestService({
    brokers: cluster.bootstrapServers,
    embeddedIssuer: true,
    env: {
      ...kafka,
      ...limits,
      KAFKA_GROUP_ID: `${topics.group}-issuer`,
      OIDC_CLIENTS_FILE: join(dir, 'clients.json'),
      OIDC_USERS_FILE: join(dir, 'users.json'),
    },
  });
});

afterAll(async () => {
  await Promise.all([svc?.stop(), issuer?.stop(), replicaA?.stop(), replicaB?.stop()]);
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  await deleteRedisKeys(`${redisPrefix}:*`);
});

const readTest = (url: string, token: string) => authedFetch(`${url}/tests/unknown-${randomUUID()}`, { token });

/** Checks a refused REST request: 429, Retry-After in whole seconds within the minute, a RATE_LIMITED problem. */
async function expectRefusedProblem(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await response.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterSeconds: retryAfter });
}

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

describe('per client IP on the issuer', () => {
  it('answers 429 on the token endpoint, then on the login form, once the IP has spent its budget', async () => {
    const tokenRequest = () =>
      fetch(`${issuer.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'machine', client_secret: 'a-wrong-guess' }),
      });
    for (let i = 0; i < 3; i += 1) expect((await tokenRequest()).status).toBe(401);
    await expectRefusedProblem(await tokenRequest());
    // The login form counts against the same address.
    const login = await fetch(`${issuer.url}/interaction/some-uid`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=a&password=b',
    });
    await expectRefusedProblem(login);
    // So does a new sign-in (each keeps an interaction in the issuer's store until it expires).
    const authorize = await fetch(`${issuer.url}/oauth/authorize?client_id=machine&response_type=code&scope=openid`, { redirect: 'manual' });
    await expectRefusedProblem(authorize);
  });
});

describe('two replicas sharing Redis', () => {
  it('share one budget per principal (one by STATE_STORE=redis, one by RATE_LIMITS_STORE=redis alone): requests split between them are refused at the shared limit', async () => {
    const token = await mintToken({ sub: `replicas-${randomUUID()}` });
    // Four allowed in all (two on each); a replica counting alone would still have room.
    for (const url of [replicaA.url, replicaB.url, replicaA.url, replicaB.url]) expect((await readTest(url, token)).status).toBe(404);
    await expectRefusedProblem(await readTest(replicaA.url, token));
    await expectRefusedProblem(await readTest(replicaB.url, token));
  });
});
