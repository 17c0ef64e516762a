/**
 * The token attack matrix: every way a forged, stale, misdirected or unverifiable access token
 * can reach the API is refused, over HTTP (/graphql and REST) and over the WebSocket handshake,
 * against a real JWKS server on a real port. Keys come only from configuration, so tokens that
 * name their own keys (jku, x5u, jwk) must be refused without the service fetching anything.
 */
import {
  CompactEncrypt,
  SignJWT,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
} from 'jose';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/base/errors.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { freePort, startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { HS256_ENV, TEST_AUDIENCE, mintToken } from '../support/tokens.js';

const topics = uniqueTopics('token-attacks');
const KID = 'trusted-key-1';
const ATTACKER_KID = 'attacker-key';
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);

let cluster: MockCluster;
let jwksServer: Server;
let hangingServer: Server;
let issuer: string;
let closedPort: number;
let hangingUrl: string;
/** Paths requested from the JWKS server, to prove the attacker's URLs are never fetched. */
const requested: string[] = [];
const keys = {} as { privateKey: CryptoKey; publicJwk: JWK; privateJwk: JWK; attackerPrivate: CryptoKey; attackerJwk: JWK; spki: string };
const services: TestService[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function close(server: Server | undefined): Promise<void> {
  if (server === undefined) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function service(label: string, env: Record<string, string>): Promise<TestService> {
  const svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: `${topics.group}-${label}`, ...env },
  });
  services.push(svc);
  return svc;
}

/** The JWKS-mode environment: no shared secret, so the issuer's published keys are the only trust. */
const jwksEnv = (env: Record<string, string>) => ({ ...env, AUTH_HS256_SECRET: '' });

/** An RS256 access token of the trusted issuer; anything may be overridden or removed (undefined). */
async function sign(
  claims: JWTPayload = {},
  options: { header?: Record<string, unknown>; key?: CryptoKey | Uint8Array; crit?: Record<string, boolean> } = {},
): Promise<string> {
  const now = nowSeconds();
  const payload: JWTPayload = { iss: issuer, aud: TEST_AUDIENCE, sub: 'alice', scope: 'tests:read tests:write', iat: now, exp: now + 300, ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  const header = { alg: 'RS256', typ: 'at+jwt', kid: KID, ...options.header } as JWTHeaderParameters;
  return new SignJWT(payload).setProtectedHeader(header).sign(options.key ?? keys.privateKey, options.crit ? { crit: options.crit } : undefined);
}

interface AttackCase {
  readonly name: string;
  readonly token: () => Promise<string>;
  /** What the refusal must name. */
  readonly reason: RegExp;
}

const attacks: AttackCase[] = [
  {
    name: 'alg "none" (unsigned)',
    reason: /algorithm/,
    token: async () =>
      `${b64url({ alg: 'none', typ: 'at+jwt' })}.${b64url({ iss: issuer, aud: TEST_AUDIENCE, sub: 'alice', scope: 'tests:read', exp: nowSeconds() + 300 })}.`,
  },
  {
    name: 'HS256 keyed with the RSA public key (algorithm confusion)',
    reason: /algorithm/,
    token: () => sign({}, { header: { alg: 'HS256' }, key: new TextEncoder().encode(keys.spki) }),
  },
  {
    name: 'RS512 when only RS256 and ES256 are allowed',
    reason: /algorithm/,
    token: async () => sign({}, { header: { alg: 'RS512' }, key: (await importJWK(keys.privateJwk, 'RS512')) as CryptoKey }),
  },
  {
    name: 'payload changed after signing',
    reason: /signature/,
    token: async () => {
      const [header, payload, signature] = (await sign()).split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as JWTPayload;
      return `${header}.${b64url({ ...claims, sub: 'admin', scope: 'tests:read tests:write tests:admin' })}.${signature}`;
    },
  },
  { name: 'expired beyond the 5 s tolerance', reason: /expired/, token: () => sign({ iat: nowSeconds() - 120, exp: nowSeconds() - 30 }) },
  { name: 'no "exp"', reason: /"exp"/, token: () => sign({ exp: undefined }) },
  { name: '"nbf" in the future', reason: /"nbf"/, token: () => sign({ nbf: nowSeconds() + 60 }) },
  { name: '"iat" in the future', reason: /"iat"/, token: () => sign({ iat: nowSeconds() + 60 }) },
  { name: 'untrusted issuer', reason: /issuer/, token: () => sign({ iss: 'https://evil.example' }) },
  { name: "another API's audience", reason: /audience/, token: () => sign({ aud: 'urn:another-api' }) },
  {
    name: 'an ID token (typ JWT, aud = client id)',
    reason: /"typ"|audience/,
    token: () => sign({ aud: 'web-client', azp: 'web-client', nonce: 'n-0S6_WzA2Mj' }, { header: { typ: 'JWT' } }),
  },
  { name: 'unknown kid (another key)', reason: /no trusted key/, token: () => sign({}, { header: { kid: ATTACKER_KID }, key: keys.attackerPrivate }) },
  {
    name: '"jku" pointing at an attacker JWKS',
    reason: /"jku"/,
    token: () => sign({}, { header: { kid: ATTACKER_KID, jku: `${issuer}/attacker/jwks` }, key: keys.attackerPrivate }),
  },
  {
    name: '"x5u" pointing at an attacker certificate',
    reason: /"x5u"/,
    token: () => sign({}, { header: { kid: ATTACKER_KID, x5u: `${issuer}/attacker/cert.pem` }, key: keys.attackerPrivate }),
  },
  { name: 'embedded "jwk" of the attacker\'s key', reason: /"jwk"/, token: () => sign({}, { header: { jwk: keys.attackerJwk }, key: keys.attackerPrivate }) },
  {
    name: 'unknown critical header',
    reason: /unsupported|crit/,
    token: () => sign({}, { header: { crit: ['x-custom'], 'x-custom': true }, crit: { 'x-custom': true } }),
  },
  {
    name: 'an encrypted token (JWE)',
    reason: /encrypted|JWE/,
    token: async () => {
      const claims = { iss: issuer, aud: TEST_AUDIENCE, sub: 'alice', scope: 'tests:read', exp: nowSeconds() + 300 };
      const key = await importJWK({ ...keys.publicJwk, alg: 'RSA-OAEP-256', use: 'enc' }, 'RSA-OAEP-256');
      return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', typ: 'at+jwt', kid: KID })
        .encrypt(key);
    },
  },
];

/** Claims off by 2 s, inside the default 5 s tolerance: skew between clocks, not an attack. */
function withinTolerance(): JWTPayload[] {
  const now = nowSeconds();
  return [{ iat: now - 60, exp: now - 2 }, { nbf: now + 2 }, { iat: now + 2 }];
}

/** What the HTTP edge answered for one token on /graphql and on a REST route. */
async function overHttp(url: string, token: string) {
  let started = Date.now();
  const graphql = await postGraphQL(url, '{ __typename }', undefined, { token });
  const graphqlMs = Date.now() - started;
  started = Date.now();
  const rest = await fetch(`${url}/tests/x`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await rest.json()) as Record<string, any>;
  return { graphql, rest: { status: rest.status, headers: rest.headers, body }, ms: Math.max(graphqlMs, Date.now() - started) };
}

/** How a graphql-ws connection authenticated with `token` ended: a result, or the close frame. */
async function overWebSocket(url: string, token: string) {
  let closed: { code: number; reason: string } | undefined;
  const started = Date.now();
  const client = createWsClient(url, { connectionParams: { authorization: `Bearer ${token}` }, onClose: (event) => (closed ??= event) });
  const operation = collect(client, '{ __typename }');
  const failure = await operation.done.then(
    () => undefined,
    (error: { code?: number; reason?: string }) => error,
  );
  const ms = Date.now() - started;
  await client.dispose();
  const close = closed ?? (failure?.code === undefined ? undefined : { code: failure.code, reason: String(failure.reason) });
  return { results: operation.results, close, ms };
}

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  const trusted = await generateKeyPair('RS256', { extractable: true });
  const attacker = await generateKeyPair('RS256', { extractable: true });
  keys.privateKey = trusted.privateKey;
  keys.privateJwk = await exportJWK(trusted.privateKey);
  keys.publicJwk = await exportJWK(trusted.publicKey);
  keys.spki = await exportSPKI(trusted.publicKey);
  keys.attackerPrivate = attacker.privateKey;
  // The attacker's key under the trusted kid: a verifier that honoured an embedded jwk would use it.
  keys.attackerJwk = { ...(await exportJWK(attacker.publicKey)), kid: KID, alg: 'RS256' };
  closedPort = await freePort();

  jwksServer = createServer((req, res) => {
    requested.push(req.url ?? '');
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/openid-configuration') return json({ issuer, jwks_uri: `${issuer}/jwks` });
    // An issuer whose discovery works but whose keys are unreachable.
    if (req.url === '/keys-down/.well-known/openid-configuration')
      return json({ issuer: `${issuer}/keys-down`, jwks_uri: `http://127.0.0.1:${closedPort}/jwks` });
    if (req.url === '/jwks') return json({ keys: [{ ...keys.publicJwk, kid: KID, alg: 'RS256', use: 'sig' }] });
    if (req.url === '/attacker/jwks') return json({ keys: [{ ...keys.attackerJwk, kid: ATTACKER_KID }] });
    res.writeHead(404).end();
  });
  issuer = await listen(jwksServer);
  // Accepts connections and never answers: key fetches must time out rather than hang requests.
  hangingServer = createServer(() => {});
  hangingUrl = await listen(hangingServer);
});

afterAll(async () => {
  for (const svc of services) await svc.stop();
  await close(jwksServer);
  await close(hangingServer);
  await cluster?.stop();
});

describe.each([
  { mode: 'discovery (AUTH_ISSUER)', env: () => jwksEnv({ AUTH_ISSUER: issuer }) },
  { mode: 'AUTH_JWKS_URI', env: () => jwksEnv({ AUTH_ISSUER: issuer, AUTH_JWKS_URI: `${issuer}/jwks` }) },
])('keys by $mode', ({ mode, env }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await service(mode.startsWith('discovery') ? 'discovery' : 'jwks', env());
  });

  describe('HTTP', () => {
    it('accepts a valid token (positive control)', async () => {
      expect(svc.config.auth.mode).toBe('jwks');
      const { graphql, rest } = await overHttp(svc.url, await sign());
      expect(graphql.status).toBe(200);
      expect(graphql.body.data).toEqual({ __typename: 'Query' });
      // Authenticated, so the REST route gets as far as looking the test up.
      expect(rest.status).toBe(404);
      expect(rest.body.code).toBe('NOT_FOUND');
    });

    it.each(attacks)('refuses $name', async ({ token, reason }) => {
      const { graphql, rest } = await overHttp(svc.url, await token());
      expect(graphql.status).toBe(401);
      expect(graphql.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(graphql.body.data).toBeUndefined();
      expect(graphql.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(graphql.body.errors?.[0]?.extensions?.reason).toMatch(reason);
      expect(rest.status).toBe(401);
      expect(rest.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(rest.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(rest.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(rest.body.detail).toMatch(reason);
    });

    it('accepts "exp" passed by 2 s and "nbf"/"iat" 2 s ahead, within the 5 s clock tolerance', async () => {
      for (const claims of withinTolerance()) {
        const { graphql } = await overHttp(svc.url, await sign(claims));
        expect({ claims, status: graphql.status }).toEqual({ claims, status: 200 });
      }
    });
  });

  describe('WebSocket', () => {
    it('accepts a valid token (positive control)', async () => {
      const { results, close } = await overWebSocket(svc.url, await sign());
      expect(results).toEqual([{ data: { __typename: 'Query' } }]);
      expect(close?.code).not.toBe(4403);
    });

    it('accepts the same tokens within the clock tolerance as HTTP does', async () => {
      for (const claims of withinTolerance()) {
        const { results, close } = await overWebSocket(svc.url, await sign(claims));
        expect({ claims, results, close: close?.code === 4403 ? close : 'not refused' }).toEqual({
          claims,
          results: [{ data: { __typename: 'Query' } }],
          close: 'not refused',
        });
      }
    });

    it.each(attacks)('closes 4403 for $name', async ({ token, reason }) => {
      const { results, close } = await overWebSocket(svc.url, await token());
      expect(results).toEqual([]);
      expect(close?.code).toBe(4403);
      expect(close?.reason).toMatch(/^Forbidden: /);
      expect(close?.reason).toMatch(reason);
    });
  });
});

describe('tokens that name their own keys', () => {
  it('never make the service fetch the URLs they point at', () => {
    // Every jku / x5u case above has run against both services by now.
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((path) => path.startsWith('/attacker'))).toEqual([]);
  });
});

describe.each([
  { name: 'discovery endpoint refuses connections', env: () => jwksEnv({ AUTH_ISSUER: `http://127.0.0.1:${closedPort}` }) },
  { name: 'JWKS named by discovery refuses connections', env: () => jwksEnv({ AUTH_ISSUER: `${issuer}/keys-down` }) },
  { name: 'AUTH_JWKS_URI refuses connections', env: () => jwksEnv({ AUTH_ISSUER: issuer, AUTH_JWKS_URI: `http://127.0.0.1:${closedPort}/jwks` }) },
  { name: 'AUTH_JWKS_URI accepts but never answers', env: () => jwksEnv({ AUTH_ISSUER: issuer, AUTH_JWKS_URI: `${hangingUrl}/jwks` }) },
])('when the $name', ({ env }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await service(`down-${services.length}`, env());
  });

  it('fails closed and fast over HTTP: 503 AUTH_UNAVAILABLE for a well-signed token', async () => {
    const { graphql, rest, ms } = await overHttp(svc.url, await sign());
    expect(graphql.status).toBe(503);
    expect(graphql.body.data).toBeUndefined();
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('AUTH_UNAVAILABLE');
    expect(rest.status).toBe(503);
    expect(rest.body).toMatchObject({ status: 503, code: 'AUTH_UNAVAILABLE' });
    // The slower of the two requests: bounded by the 3 s key-fetch timeout, never a hang.
    expect(ms).toBeLessThan(5000);
  });

  it('fails closed and fast over WebSocket: close 4500 "Unavailable…"', async () => {
    const { results, close, ms } = await overWebSocket(svc.url, await sign());
    expect(results).toEqual([]);
    expect(close?.code).toBe(4500);
    expect(close?.reason).toMatch(/^Unavailable/);
    expect(ms).toBeLessThan(5000);
  });
});

describe('HS256 mode', () => {
  const base = HS256_ENV;

  it('refuses to start with a secret shorter than 32 bytes, and accepts 32', () => {
    let error: unknown;
    try {
      loadConfig({ ...base, AUTH_HS256_SECRET: 'x'.repeat(31) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('AUTH_HS256_SECRET');
    expect((error as ConfigError).message).toMatch(/^AUTH_HS256_SECRET: /);
    expect(loadConfig({ ...base, AUTH_HS256_SECRET: 'x'.repeat(32) }).auth.mode).toBe('hs256');
  });

  it('refuses symmetric or "none" algorithms in JWKS mode at startup', () => {
    for (const algorithms of ['HS256', 'RS256,none']) {
      expect(() => loadConfig(jwksEnv({ ...base, AUTH_ISSUER: 'https://issuer.example', AUTH_ALGORITHMS: algorithms }))).toThrow(/^AUTH_ALGORITHMS: /);
    }
  });

  describe('against a running service', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await service('hs256', {});
    });

    it('accepts a token signed with the shared secret (positive control)', async () => {
      const { graphql } = await overHttp(svc.url, await mintToken());
      expect(graphql.status).toBe(200);
      expect(graphql.body.data).toEqual({ __typename: 'Query' });
    });

    it('refuses a token signed with another secret (401) on HTTP and WebSocket', async () => {
      const forged = await mintToken({}, { secret: 'another-secret-of-at-least-thirty-two-bytes' });
      const { graphql, rest } = await overHttp(svc.url, forged);
      expect(graphql.status).toBe(401);
      expect(graphql.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(graphql.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: expect.stringMatching(/signature/) });
      expect(rest.status).toBe(401);
      const { close } = await overWebSocket(svc.url, forged);
      expect(close).toMatchObject({ code: 4403, reason: expect.stringMatching(/^Forbidden: .*signature/) });
    });

    it('refuses an RS256 token of the right issuer (only HS256 is allowed)', async () => {
      const { graphql } = await overHttp(svc.url, await sign({ iss: HS256_ENV.AUTH_ISSUER }));
      expect(graphql.status).toBe(401);
      expect(graphql.body.errors?.[0]?.extensions?.reason).toMatch(/algorithm/);
    });
  });
});
