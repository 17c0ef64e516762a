/**
 * The embedded OAuth 2.0 / OIDC issuer, driven the way real clients drive it: openid-client for
 * discovery and the token endpoint, and plain fetch with a cookie jar for the browser's trip
 * through the login page. Covers client credentials, authorization code with PKCE, refresh token
 * rotation and reuse detection, the grants and response types that must stay disabled, and exact
 * redirect URI matching.
 */
import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL } from '../support/graphql.js';
import { browse as browseAs, CookieJar, hop as hopAt } from '../support/oauth-browser.js';
import { writeIssuerFiles, type IssuerFiles } from '../support/issuer-files.js';
import { startPipelineService, type TestService } from '../support/service.js';

const AUDIENCE = 'urn:result-collection-service';
const REDIRECT = 'http://localhost:3000/callback';
const API_SCOPES = 'tests:read tests:write';
const ALICE = { username: 'alice', password: 'correct horse battery staple', sub: 'user-alice', name: 'Alice Example', email: 'alice@example.test' };
const SECRETS = {
  machine: 'machine-secret-0123456789abcdef',
  hashed: 'hashed-secret-0123456789abcdef',
  web: 'web-secret-0123456789abcdef',
  reader: 'reader-secret-0123456789abcdef',
};
// A well-formed S256 challenge (RFC 7636 appendix B) for requests that never reach the token endpoint.
const PKCE_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const START = 'mutation { startTest(input: { name: "oauth" }) { correlationId } }';

let svc: TestService;
let files: IssuerFiles | undefined;
let issuer: string;

beforeAll(async () => {
  const code = { grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] };
  const clients = [
    { client_id: 'machine', client_secret: SECRETS.machine, grant_types: ['client_credentials'], redirect_uris: [] },
    {
      client_id: 'hashed',
      client_secret: `sha256:${createHash('sha256').update(SECRETS.hashed).digest('hex')}`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
    },
    { client_id: 'web', client_secret: SECRETS.web, token_endpoint_auth_method: 'client_secret_post', ...code },
    { client_id: 'spa', token_endpoint_auth_method: 'none', ...code },
    { client_id: 'reader', client_secret: SECRETS.reader, grant_types: ['client_credentials'], redirect_uris: [], scope: 'tests:read' },
  ];
  files = await writeIssuerFiles('oauth-flows', [ALICE], clients);
  svc = await startPipelineService({ embeddedIssuer: true, env: files.env });
  issuer = svc.config.auth.issuer;
});

afterAll(async () => {
  await svc?.stop();
  await files?.remove();
});

/** An openid-client configuration for one of the registered clients, found by discovery. */
function configFor(clientId: string, secret?: string): Promise<client.Configuration> {
  const auth = secret === undefined ? client.None() : clientId === 'web' ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
  return client.discovery(new URL(issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

/**
 * The OAuth error code of a rejected openid-client call. A 401 with a WWW-Authenticate challenge
 * (client_secret_basic) comes as a challenge error holding the unread response.
 */
async function oauthError(call: Promise<unknown>): Promise<{ error: string; status: number | undefined }> {
  const failure = await call.then(
    () => undefined,
    (error: { error?: string; status?: number; response?: Response }) => error,
  );
  expect(failure, 'the request should have been refused').toBeDefined();
  const error = failure?.error ?? (failure?.response ? ((await failure.response.json()) as { error?: string }).error : undefined);
  return { error: String(error), status: failure?.status };
}

/** One browser hop against this issuer (see test/support/oauth-browser.ts). */
const hop = (jar: CookieJar, url: URL | string, form?: Record<string, string>) => hopAt(jar, issuer, url, form);

/** Follows the browser through the authorization endpoint, signing in as Alice. */
const browse = (jar: CookieJar, start: URL) => browseAs(jar, start, { issuer, redirectUri: REDIRECT, user: ALICE });

/** The authorization code flow with PKCE, ending in the token response. */
async function signIn(config: client.Configuration, jar = new CookieJar()) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: `openid profile email ${API_SCOPES}`,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callback } = await browse(jar, url);
  if (callback === undefined) throw new Error('the browser never reached the redirect URI');
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
}

/** The error of an authorization request: in the redirect (query or fragment) or in the body. */
async function authorizationError(url: URL): Promise<{ error: string | null; redirected: boolean; status: number }> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location !== null) {
    const target = new URL(location, issuer);
    const params = new URLSearchParams(target.hash.slice(1) || target.search);
    return { error: params.get('error'), redirected: target.href.startsWith(REDIRECT), status: response.status };
  }
  const body = (await response.json()) as { error?: string };
  return { error: body.error ?? null, redirected: false, status: response.status };
}

const authorizeUrl = (params: Record<string, string>) =>
  new URL(`/oauth/authorize?${new URLSearchParams({ client_id: 'spa', redirect_uri: REDIRECT, scope: 'openid', state: 'st', ...params })}`, issuer);

describe('discovery', () => {
  it('publishes the issuer, its endpoints, only the code response type and only S256', async () => {
    const response = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Record<string, any>;
    expect(doc).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      jwks_uri: `${issuer}/oauth/jwks`,
      userinfo_endpoint: `${issuer}/userinfo`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
    });
    expect(doc.grant_types_supported).not.toContain('password');
    expect(doc.grant_types_supported).not.toContain('implicit');
    const jwks = (await (await fetch(doc.jwks_uri)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) expect(key).not.toHaveProperty('d');
    // openid-client accepts the document (it checks the issuer identifier itself).
    expect((await configFor('machine', SECRETS.machine)).serverMetadata().issuer).toBe(issuer);
  });
});

describe('client credentials', () => {
  it('issues an RS256 at+jwt for the API audience with the scope asked, usable for queries and mutations', async () => {
    const tokens = await client.clientCredentialsGrant(await configFor('machine', SECRETS.machine), { scope: API_SCOPES });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: issuer, aud: AUDIENCE, client_id: 'machine', sub: 'machine' });
    expect(String(claims.scope).split(' ').sort()).toEqual(API_SCOPES.split(' '));

    const started = await postGraphQL(svc.url, START, undefined, { token: tokens.access_token });
    expect(started.status).toBe(200);
    const id = started.body.data?.startTest.correlationId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const read = await postGraphQL(svc.url, 'query($id: ID!) { test(correlationId: $id) { correlationId status } }', { id }, { token: tokens.access_token });
    expect(read.body.data?.test).toEqual({ correlationId: id, status: 'PENDING' });
  });

  it('gives a read-only client a token that can read but not start a test (403 insufficient_scope)', async () => {
    const tokens = await client.clientCredentialsGrant(await configFor('reader', SECRETS.reader), { scope: 'tests:read' });
    expect(decodeJwt(tokens.access_token).scope).toBe('tests:read');
    expect((await postGraphQL(svc.url, '{ __typename }', undefined, { token: tokens.access_token })).status).toBe(200);
    const refused = await postGraphQL(svc.url, START, undefined, { token: tokens.access_token });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope".*scope="tests:write"/);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.body.data ?? null).toBeNull();
  });

  it('narrows a read-only client asking for the write scope to what it is allowed', async () => {
    const tokens = await client.clientCredentialsGrant(await configFor('reader', SECRETS.reader), { scope: API_SCOPES });
    expect(tokens.scope).toBe('tests:read');
    expect(decodeJwt(tokens.access_token).scope).toBe('tests:read');
    expect((await postGraphQL(svc.url, START, undefined, { token: tokens.access_token })).status).toBe(403);
  });

  it('accepts a client whose secret is stored hashed, but not the hash itself as the secret', async () => {
    const tokens = await client.clientCredentialsGrant(await configFor('hashed', SECRETS.hashed), { scope: 'tests:read' });
    expect(decodeJwt(tokens.access_token).client_id).toBe('hashed');
    const stored = `sha256:${createHash('sha256').update(SECRETS.hashed).digest('hex')}`;
    expect(await oauthError(client.clientCredentialsGrant(await configFor('hashed', stored), { scope: 'tests:read' }))).toEqual({
      error: 'invalid_client',
      status: 401,
    });
  });

  it('refuses a wrong secret with 401 invalid_client', async () => {
    const wrong = await configFor('machine', 'not-the-machine-secret-at-all');
    expect(await oauthError(client.clientCredentialsGrant(wrong, { scope: API_SCOPES }))).toEqual({ error: 'invalid_client', status: 401 });
  });
});

describe('authorization code with PKCE', () => {
  it('signs in through the login page, which refuses a wrong password', async () => {
    const config = await configFor('web', SECRETS.web);
    const jar = new CookieJar();
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: `openid profile email ${API_SCOPES}`,
      state: 'xyz',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const toLogin = await hop(jar, url);
    expect(toLogin.status).toBe(303);
    const loginUrl = new URL(toLogin.headers.get('location') as string, issuer);
    expect(loginUrl.pathname).toMatch(/^\/interaction\/[\w-]+$/);

    const form = await hop(jar, loginUrl);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await form.text();
    expect(html).toContain(`action="${loginUrl.pathname}"`);
    expect(html).toMatch(/name="username"[\s\S]*name="password"/);

    const wrong = await hop(jar, loginUrl, { username: ALICE.username, password: 'Tr0ub4dor&3' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/Wrong username or password[\s\S]*name="password"/);
    const unknown = await hop(jar, loginUrl, { username: 'mallory', password: ALICE.password });
    expect(unknown.status).toBe(401);

    const accepted = await hop(jar, loginUrl, { username: ALICE.username, password: ALICE.password });
    expect(accepted.status).toBe(303);
    const { callback } = await browse(jar, new URL(accepted.headers.get('location') as string, issuer));
    expect(callback?.searchParams.get('state')).toBe('xyz');
    expect(callback?.searchParams.get('code')).toBeTruthy();

    const tokens = await client.authorizationCodeGrant(config, callback as URL, { pkceCodeVerifier: verifier, expectedState: 'xyz', idTokenExpected: true });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.claims()?.sub).toBe(ALICE.sub);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: ALICE.sub, aud: AUDIENCE, client_id: 'web' });
  });

  it('issues tokens whose access token works at /userinfo and /graphql, while the ID token is refused as a bearer', async () => {
    const config = await configFor('web', SECRETS.web);
    const tokens = await signIn(config);
    const idToken = tokens.id_token as string;
    expect(decodeJwt(idToken)).toMatchObject({ sub: ALICE.sub, aud: 'web', iss: issuer });

    const alice = { sub: ALICE.sub, name: ALICE.name, email: ALICE.email };
    expect(await client.fetchUserInfo(config, tokens.access_token, ALICE.sub)).toEqual(alice);
    // OIDC Core 5.3.1: GET or POST, the token in the header or, on a POST, as a form parameter (RFC 6750 section 2.2).
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const posted = await fetch(`${issuer}/userinfo`, { method: 'POST', headers: bearer });
    expect([posted.status, posted.headers.get('cache-control'), await posted.json()]).toEqual([200, 'no-store', alice]);
    const inForm = await fetch(`${issuer}/userinfo`, { method: 'POST', headers: form, body: new URLSearchParams({ access_token: tokens.access_token }) });
    expect([inForm.status, await inForm.json()]).toEqual([200, alice]);
    const twice = await fetch(`${issuer}/userinfo`, {
      method: 'POST',
      headers: { ...form, ...bearer },
      body: new URLSearchParams({ access_token: tokens.access_token }),
    });
    expect([twice.status, twice.headers.get('www-authenticate'), await twice.json()]).toEqual([
      400,
      expect.stringMatching(/^Bearer error="invalid_request"/),
      expect.objectContaining({ error: 'invalid_request', code: 'BAD_REQUEST' }),
    ]);
    const repeated = await fetch(`${issuer}/userinfo`, { method: 'POST', headers: form, body: `access_token=${tokens.access_token}&access_token=x` });
    expect([repeated.status, (await repeated.json()).error]).toEqual([400, 'invalid_request']);
    const none = await fetch(`${issuer}/userinfo`, { method: 'POST' });
    expect([none.status, none.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^Bearer error="invalid_token"/)]);
    expect((await postGraphQL(svc.url, START, undefined, { token: tokens.access_token })).status).toBe(200);

    const refused = await postGraphQL(svc.url, '{ __typename }', undefined, { token: idToken });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const userinfo = await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${idToken}` } });
    expect(userinfo.status).toBe(401);
    // OIDC Core 5.3.3: the RFC 6750 challenge and error body.
    expect(userinfo.headers.get('www-authenticate')).toMatch(
      /^Bearer error="invalid_token", error_description="Access token refused: the token is not an access token/,
    );
    expect(await userinfo.json()).toMatchObject({ error: 'invalid_token', code: 'UNAUTHENTICATED' });
  });

  it.each([
    ['without PKCE', {}],
    ['with the "plain" PKCE method', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
  ])('answers an authorization request %s with an invalid_request redirect', async (_case, params) => {
    expect(await authorizationError(authorizeUrl({ response_type: 'code', ...params }))).toEqual({ error: 'invalid_request', redirected: true, status: 303 });
  });

  it('refuses the code with a wrong code_verifier (invalid_grant)', async () => {
    const config = await configFor('spa');
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's1',
    });
    const { callback } = await browse(new CookieJar(), url);
    const grant = client.authorizationCodeGrant(config, callback as URL, { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: 's1' });
    expect((await oauthError(grant)).error).toBe('invalid_grant');
  });
});

describe('token endpoint CORS', () => {
  /** A fresh code for `clientId`, and its verifier. */
  async function codeFor(clientId: string, secret?: string) {
    const config = await configFor(clientId, secret);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: `openid ${API_SCOPES}`,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'c1',
    });
    const { callback } = await browse(new CookieJar(), url);
    return { code: callback?.searchParams.get('code') ?? '', verifier };
  }
  const exchange = (origin: string, form: Record<string, string>) =>
    fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', redirect_uri: REDIRECT, ...form }),
    });

  it("lets a public client's page finish code + PKCE from the origin of its redirect URI", async () => {
    const origin = new URL(REDIRECT).origin;
    const preflight = await fetch(`${issuer}/oauth/token`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);

    const { code, verifier } = await codeFor('spa');
    const response = await exchange(origin, { client_id: 'spa', code, code_verifier: verifier });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    const body = (await response.json()) as { access_token: string };
    expect((await postGraphQL(svc.url, '{ __typename }', undefined, { token: body.access_token })).status).toBe(200);
  });

  it('refuses the exchange from any other origin, without a CORS header the browser could honour', async () => {
    const { code, verifier } = await codeFor('spa');
    const response = await exchange('https://elsewhere.example', { client_id: 'spa', code, code_verifier: verifier });
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('answers no browser for a confidential client, whose secret belongs on a server', async () => {
    const { code, verifier } = await codeFor('web', SECRETS.web);
    const response = await exchange(new URL(REDIRECT).origin, { client_id: 'web', client_secret: SECRETS.web, code, code_verifier: verifier });
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('refresh tokens', () => {
  it('rotate on use; reusing a superseded one is refused and kills the newer one of the same family', async () => {
    const config = await configFor('web', SECRETS.web);
    const first = await signIn(config);
    const second = await client.refreshTokenGrant(config, first.refresh_token as string);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await postGraphQL(svc.url, '{ __typename }', undefined, { token: second.access_token })).status).toBe(200);

    expect((await oauthError(client.refreshTokenGrant(config, first.refresh_token as string))).error).toBe('invalid_grant');
    expect((await oauthError(client.refreshTokenGrant(config, second.refresh_token as string))).error).toBe('invalid_grant');
  });

  it('lets exactly one of two concurrent refreshes with the same token win; the loser counts as reuse and ends the family', async () => {
    const config = await configFor('spa');
    const tokens = await signIn(config);
    const outcomes = await Promise.allSettled([0, 1].map(() => client.refreshTokenGrant(config, tokens.refresh_token as string)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((o) => (o.reason as { error?: string }).error)).toEqual(['invalid_grant']);
    // The second presentation of the same token is a replay, so the rotated token is revoked too.
    const rotated = won[0]?.value.refresh_token as string;
    expect(rotated).toBeTruthy();
    expect((await oauthError(client.refreshTokenGrant(config, rotated))).error).toBe('invalid_grant');
  });
});

describe('disabled grants and response types', () => {
  it('refuses the password grant (unsupported_grant_type)', async () => {
    const config = await configFor('web', SECRETS.web);
    expect(
      (await oauthError(client.genericGrantRequest(config, 'password', { username: ALICE.username, password: ALICE.password, scope: 'openid' }))).error,
    ).toBe('unsupported_grant_type');
  });

  it.each([
    ['implicit', 'token'],
    ['hybrid', 'code id_token'],
  ])('refuses the %s response type (unsupported_response_type)', async (_flow, responseType) => {
    const outcome = await authorizationError(
      authorizeUrl({ response_type: responseType, nonce: 'n', code_challenge: PKCE_CHALLENGE, code_challenge_method: 'S256' }),
    );
    expect(outcome).toEqual({ error: 'unsupported_response_type', redirected: true, status: 303 });
  });
});

describe('redirect URIs', () => {
  const pkce = { response_type: 'code', code_challenge: PKCE_CHALLENGE, code_challenge_method: 'S256' };

  it('accepts the registered URI exactly (control)', async () => {
    const response = await fetch(authorizeUrl(pkce), { redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(/^\/interaction\//);
  });

  it.each([
    ['a trailing slash', `${REDIRECT}/`],
    ['an extra query string', `${REDIRECT}?next=/admin`],
    ['a different host case', 'http://LOCALHOST:3000/callback'],
    ['a different path case', 'http://localhost:3000/Callback'],
    ['another port', 'http://localhost:3001/callback'],
  ])('refuses %s without redirecting there', async (_variant, redirectUri) => {
    const response = await fetch(authorizeUrl({ ...pkce, redirect_uri: redirectUri }), { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(((await response.json()) as { error?: string }).error).toBe('invalid_redirect_uri');
  });
});
