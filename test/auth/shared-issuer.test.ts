/**
 * A durable, shared issuer: with STATE_STORE=redis, two replicas of the service (each started the
 * way the process starts, through startFromConfig) keep the embedded issuer's grants and refresh
 * tokens in the real Redis. A refresh token obtained from replica 1 is rotated on replica 2 after
 * replica 1 restarted, and reusing the old one still revokes the whole family; a grant kept there
 * gives no admin scope at a refresh once the users file no longer marks the user an admin. In production the
 * process refuses to start without configured issuer keys.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/base/logger.js';
import { startFromConfig, type RunningService } from '../../src/app/start-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { writeIssuerFiles, type IssuerFiles } from '../support/issuer-files.js';
import { browse, CookieJar } from '../support/oauth-browser.js';
import { runUntilExit } from '../support/process.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { freePort, uniqueTopics } from '../support/service.js';

const topics = uniqueTopics('shared-issuer');
const REDIRECT = 'http://localhost:3000/callback';
const ALICE = { username: 'alice', password: 'correct horse battery staple', sub: 'user-alice' };
const PREFIX = `test-shared-issuer-${randomUUID().slice(0, 8)}`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let cluster: MockCluster;
let files: IssuerFiles | undefined;
/** The same users file as changed later: Alice no longer an admin. */
let demoted: IssuerFiles | undefined;
let env: Record<string, string>;
let issuer: string;
const ports: number[] = [];
const replicas: Array<RunningService | undefined> = [undefined, undefined];

/** Starts replica `index` on its own port; every replica trusts and publishes the same issuer URL. */
async function startReplica(index: number, overrides: Record<string, string> = {}): Promise<RunningService> {
  const config = loadConfig({ ...env, ...overrides, PORT: String(ports[index]) });
  const running = await startFromConfig(config, createLogger({ level: config.logLevel }));
  replicas[index] = running;
  return running;
}

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  const clients = [
    {
      client_id: 'spa',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      scope: 'tests:read tests:write tests:admin',
    },
  ];
  files = await writeIssuerFiles('shared-issuer', [{ ...ALICE, admin: true }], clients);
  demoted = await writeIssuerFiles('shared-issuer-demoted', [ALICE], clients);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  ports.push(await freePort(), await freePort());
  issuer = `http://127.0.0.1:${ports[0]}`;
  env = {
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: topics.results,
    KAFKA_REQUESTS_TOPIC: topics.requests,
    KAFKA_GROUP_ID: topics.group,
    SHUTDOWN_TIMEOUT_MS: '5000',
    STATE_STORE: 'redis',
    REDIS_URL,
    REDIS_KEY_PREFIX: PREFIX,
    // Behind one load balancer every replica is the same issuer, with the same keys.
    PUBLIC_URL: issuer,
    OIDC_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'shared-key' }),
    OIDC_COOKIE_KEYS: 'a-shared-cookie-key-of-at-least-32-characters',
    ...files.env,
  };
  await Promise.all([startReplica(0), startReplica(1)]);
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r?.stop()));
  await cluster?.stop();
  await Promise.all([files?.remove(), demoted?.remove()]);
  await deleteRedisKeys(`${PREFIX}:*`);
});

/** Alice signs in on replica 1 (the authorization code flow with PKCE) and gets a refresh token. */
async function signIn(apiScopes = 'tests:read tests:write'): Promise<client.TokenEndpointResponse> {
  const config = await client.discovery(new URL(issuer), 'spa', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: `openid ${apiScopes}`,
    state: 's',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callback } = await browse(new CookieJar(), url, { issuer, redirectUri: REDIRECT, user: ALICE });
  if (callback === undefined) throw new Error('the browser never reached the redirect URI');
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's', idTokenExpected: true });
  expect(tokens.refresh_token).toBeTruthy();
  return tokens;
}

/** The refresh token grant at one replica's own token endpoint. */
async function refreshAt(replica: number, refreshToken: string): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`http://127.0.0.1:${ports[replica]}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'spa' }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/**
 * Waits until replica `replica`'s issuer reaches Redis: its connection (no offline queue) is still
 * connecting right after a start. An authorization request stores an interaction there (303) and
 * spends no token, so repeating it is harmless.
 */
async function issuerConnected(replica: number): Promise<void> {
  const params = {
    client_id: 'spa',
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  };
  await eventually(
    async () => (await fetch(`http://127.0.0.1:${ports[replica]}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' })).status === 303,
    15_000,
    "the issuer's Redis connection",
  );
}

describe('the embedded issuer over STATE_STORE=redis', () => {
  it('rotates on replica 2 a refresh token from replica 1 after replica 1 restarts; reusing the old one revokes the family', { timeout: 60_000 }, async () => {
    const first = await signIn();
    const old = first.refresh_token as string;

    // The grant and its refresh token are in Redis, not in replica 1's memory.
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.keys(`${PREFIX}:oidc:RefreshToken:*`)).toHaveLength(1);
      expect(await redis.keys(`${PREFIX}:oidc:Grant:*`)).toHaveLength(1);
    } finally {
      await redis.quit();
    }

    await replicas[0]?.stop();
    await startReplica(0);

    const rotated = await refreshAt(1, old);
    expect(rotated.status).toBe(200);
    const newest = rotated.body.refresh_token as string;
    expect(newest).toBeTruthy();
    expect(newest).not.toBe(old);
    expect(decodeJwt(rotated.body.access_token as string)).toMatchObject({ iss: issuer, sub: ALICE.sub });
    // The new access token is honoured by both replicas.
    for (const port of ports) {
      expect((await postGraphQL(`http://127.0.0.1:${port}`, '{ __typename }', undefined, { token: rotated.body.access_token })).status).toBe(200);
    }

    // Replaying the superseded token, on the restarted replica, is refused and ends the family...
    const replay = await refreshAt(0, old);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    // ...so the newest refresh token is refused too, on either replica.
    for (const replica of [1, 0]) {
      const refused = await refreshAt(replica, newest);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    }
  });

  it(
    'lets exactly one of two replicas presenting the same refresh token at once win; the other is a replay that ends the family',
    { timeout: 60_000 },
    async () => {
      const { refresh_token: token } = await signIn();
      const outcomes = await Promise.all([refreshAt(0, token as string), refreshAt(1, token as string)]);
      const won = outcomes.filter((o) => o.status === 200);
      const lost = outcomes.filter((o) => o.status !== 200);
      expect(won).toHaveLength(1);
      expect(lost.map((o) => [o.status, o.body.error])).toEqual([[400, 'invalid_grant']]);
      const rotated = won[0]?.body.refresh_token as string;
      expect(rotated).toBeTruthy();
      const after = await refreshAt(0, rotated);
      expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
    },
  );

  it('drops the admin scope at the next refresh once the users file no longer marks the user an admin', { timeout: 60_000 }, async () => {
    const scopes = (accessToken: string) => String(decodeJwt(accessToken).scope).split(' ').sort();
    const { access_token: first, refresh_token: token } = await signIn('tests:read tests:write tests:admin');
    expect(scopes(first)).toEqual(['tests:admin', 'tests:read', 'tests:write']);

    // The grant in Redis still lists the admin scope. A replica started after the change (an API
    // process: it joins no consumer group) reads the new file.
    ports[2] = await freePort();
    await startReplica(2, { SERVICE_ROLE: 'api', OIDC_USERS_FILE: demoted!.env.OIDC_USERS_FILE });
    await issuerConnected(2);
    const refreshed = await refreshAt(2, token as string);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token as string)).toMatchObject({ sub: ALICE.sub });
    expect(scopes(refreshed.body.access_token as string)).toEqual(['tests:read', 'tests:write']);
  });
});

describe('production', () => {
  it.each([
    ['OIDC_SIGNING_KEY', {}],
    ['OIDC_COOKIE_KEYS', { OIDC_SIGNING_KEY: '{"kty":"RSA","d":"private"}' }],
  ])('without %s the process refuses to start the embedded issuer: exit 78 naming the variable', { timeout: 30_000 }, async (variable, extra) => {
    const { code, output } = await runUntilExit({ NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', KAFKA_BROKERS: '127.0.0.1:9', ...extra });
    expect(code).toBe(78);
    const line = JSON.parse(output.trim()) as { level: string; msg: string; variable: string };
    expect(line.level).toBe('fatal');
    expect(line.variable).toBe(variable);
    expect(line.msg).toMatch(new RegExp(`^invalid configuration: ${variable}: is required with NODE_ENV=production`));
  });
});
