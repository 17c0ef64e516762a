/**
 * `TRUST_PROXY` over real HTTP: who the client is for the issuer's per-IP sign-in budget, and which
 * scheme and host the embedded issuer publishes. The test's requests all come from 127.0.0.1 and
 * play the proxy by sending `X-Forwarded-*` themselves. Three services: none trusted (the default),
 * one proxy hop trusted (`1`), and a proxy list that does not hold 127.0.0.1 (`10.0.0.0/8`).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, hop } from '../support/oauth-browser.js';
import { writeIssuerFiles, type IssuerFiles } from '../support/issuer-files.js';
import { startPipelineService, type TestService } from '../support/service.js';

const REDIRECT = 'http://localhost:3000/callback';
const USER = { username: 'alice', password: 'correct horse battery staple' };
const SPOOFED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'attacker.example' };

let files: IssuerFiles | undefined;
let direct: TestService;
let behindOne: TestService;
let elsewhere: TestService;

beforeAll(async () => {
  const issuerFiles = await writeIssuerFiles(
    'trust-proxy',
    [{ ...USER, sub: 'user-alice' }],
    [
      { client_id: 'machine', client_secret: 'machine-secret-of-some-length', grant_types: ['client_credentials'], redirect_uris: [] },
      { client_id: 'spa', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], redirect_uris: [REDIRECT] },
    ],
  );
  files = issuerFiles;
  const start = (_label: string, trustProxy: Record<string, string>) =>
    startPipelineService({
      embeddedIssuer: true,
      env: {
        ...issuerFiles.env,
        RATE_LIMITS: 'on',
        RATE_LIMIT_AUTH_PER_MINUTE: '2',
        ...trustProxy,
      },
    });
  [direct, behindOne, elsewhere] = await Promise.all([
    start('direct', {}),
    start('one-hop', { TRUST_PROXY: '1' }),
    start('elsewhere', { TRUST_PROXY: '10.0.0.0/8' }),
  ]);
});

afterAll(async () => {
  await Promise.all([direct?.stop(), behindOne?.stop(), elsewhere?.stop()]);
  await files?.remove();
});

/**
 * A client-secret guess at the token endpoint from the local address `peer` (any of 127.0.0.0/8),
 * sent as if forwarded for `client`: its status. Guesses come from peers of their own, so spending
 * a budget leaves 127.0.0.1's sign-ins alone.
 */
function guess(svc: TestService, client: string, peer = '127.0.0.1'): Promise<number> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'machine', client_secret: 'a-wrong-guess' }).toString();
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), 'x-forwarded-for': client };
  return new Promise((resolve, reject) => {
    const req = request(`${svc.url}/oauth/token`, { method: 'POST', localAddress: peer, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The issuer's discovery document, fetched with `headers`. */
async function discovery(svc: TestService, headers: Record<string, string>): Promise<Record<string, string>> {
  const response = await fetch(`${svc.url}/.well-known/openid-configuration`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, string>;
}

/**
 * A sign-in whose authorization request carries `headers`: where the login form sends the browser
 * back to (the issuer builds that absolute URL from the scheme and host it believes).
 */
async function resumeUrlAfterSignIn(svc: TestService, headers: Record<string, string>): Promise<URL> {
  const issuer = svc.config.auth.issuer;
  const jar = new CookieJar();
  const params = {
    client_id: 'spa',
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  };
  const authorize = await fetch(`${issuer}/oauth/authorize?${new URLSearchParams(params)}`, { headers, redirect: 'manual' });
  jar.store(authorize);
  expect(authorize.status).toBe(303);
  const login = new URL(authorize.headers.get('location') as string, issuer);
  const signedIn = await hop(jar, issuer, login, USER);
  expect(signedIn.status).toBe(303);
  return new URL(signedIn.headers.get('location') as string, issuer);
}

describe('TRUST_PROXY unset: no peer is a proxy', () => {
  it("ignores X-Forwarded-For: requests claiming to be different clients share the peer's sign-in budget", async () => {
    expect([await guess(direct, '203.0.113.1', '127.0.0.2'), await guess(direct, '203.0.113.2', '127.0.0.2')]).toEqual([401, 401]);
    expect(await guess(direct, '203.0.113.3', '127.0.0.2')).toBe(429);
    // Another peer is another client.
    expect(await guess(direct, '203.0.113.3', '127.0.0.3')).toBe(401);
  });

  it("takes neither scheme nor host from X-Forwarded-*: discovery and the sign-in redirect keep the service's own", async () => {
    const issuer = direct.config.auth.issuer;
    const doc = await discovery(direct, SPOOFED);
    expect([doc.authorization_endpoint, doc.token_endpoint, doc.jwks_uri]).toEqual([
      `${issuer}/oauth/authorize`,
      `${issuer}/oauth/token`,
      `${issuer}/oauth/jwks`,
    ]);
    const resume = await resumeUrlAfterSignIn(direct, SPOOFED);
    expect([resume.origin, resume.pathname]).toEqual([new URL(issuer).origin, expect.stringMatching(/^\/oauth\/authorize\/[\w-]+$/)]);
  });
});

describe('TRUST_PROXY lists proxies, and the peer is not one of them', () => {
  it('ignores its X-Forwarded-* for the budget, discovery and the sign-in redirect alike', async () => {
    const issuer = elsewhere.config.auth.issuer;
    expect([await guess(elsewhere, '203.0.113.1', '127.0.0.2'), await guess(elsewhere, '203.0.113.2', '127.0.0.2')]).toEqual([401, 401]);
    expect(await guess(elsewhere, '203.0.113.3', '127.0.0.2')).toBe(429);
    expect((await discovery(elsewhere, SPOOFED)).token_endpoint).toBe(`${issuer}/oauth/token`);
    expect((await resumeUrlAfterSignIn(elsewhere, SPOOFED)).origin).toBe(new URL(issuer).origin);
  });
});

describe('TRUST_PROXY=1: one proxy in front', () => {
  it('counts each client behind the proxy on a budget of its own', async () => {
    expect([await guess(behindOne, '198.51.100.1', '127.0.0.4'), await guess(behindOne, '198.51.100.1', '127.0.0.4')]).toEqual([401, 401]);
    expect(await guess(behindOne, '198.51.100.1', '127.0.0.4')).toBe(429);
    expect(await guess(behindOne, '198.51.100.2', '127.0.0.4')).toBe(401);
    // Only the hop the proxy appended counts: what the client put before it is its own claim.
    expect(await guess(behindOne, '198.51.100.99, 198.51.100.1', '127.0.0.4')).toBe(429);
  });

  it('counts an IPv6 client per /64: rotating addresses within it does not buy a fresh budget', async () => {
    expect([await guess(behindOne, '2001:db8:7:1::1', '127.0.0.4'), await guess(behindOne, '2001:db8:7:1::2', '127.0.0.4')]).toEqual([401, 401]);
    expect(await guess(behindOne, '2001:db8:7:1:ffff::3', '127.0.0.4')).toBe(429);
    expect(await guess(behindOne, '2001:db8:7:2::1', '127.0.0.4')).toBe(401);
  });

  it('publishes the scheme and host the proxy forwards, in discovery and in the sign-in redirect', async () => {
    const doc = await discovery(behindOne, SPOOFED);
    expect([doc.authorization_endpoint, doc.token_endpoint]).toEqual(['https://attacker.example/oauth/authorize', 'https://attacker.example/oauth/token']);
    expect((await resumeUrlAfterSignIn(behindOne, SPOOFED)).origin).toBe('https://attacker.example');
  });
});
