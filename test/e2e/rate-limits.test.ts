/**
 * Rate limits over real connections: per client IP on the embedded issuer's token endpoint and
 * login form, and one budget per principal shared by two replicas through Redis. The per-principal
 * limits of one service (/tests, /graphql, WebSocket and SSE) are in pipeline/rate-limits.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { expectRefusedProblem, readTest } from '../support/rate-limits.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const topics = uniqueTopics('ratelimit');
const redisPrefix = `ratelimit-${randomUUID().slice(0, 8)}`;
let cluster: MockCluster;
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
  await Promise.all([issuer?.stop(), replicaA?.stop(), replicaB?.stop()]);
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  await deleteRedisKeys(`${redisPrefix}:*`);
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
