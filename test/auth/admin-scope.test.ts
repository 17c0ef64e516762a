/**
 * Who gets the admin scope from the embedded issuer: a user's token carries it only when the
 * client may ask for it AND the users file marks the user `"admin": true`; a client-credentials
 * token (no user) keeps what the clients file allows the client. Real tokens through the real
 * issuer (discovery, the login page, the token endpoint), then used on the API.
 */
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browse, CookieJar } from '../support/oauth-browser.js';
import { writeIssuerFiles, type IssuerFiles } from '../support/issuer-files.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const REDIRECT = 'http://localhost:3000/callback';
const ALL_SCOPES = 'tests:read tests:write tests:admin';
const ALICE = { username: 'alice', password: 'correct horse battery staple', sub: 'user-alice' };
const ROOT = { username: 'root', password: 'another long pass phrase', sub: 'user-root' };
const OPS_SECRET = 'ops-secret-0123456789abcdef';

let svc: TestService;
let files: IssuerFiles | undefined;
let issuer: string;

beforeAll(async () => {
  const users = [ALICE, { ...ROOT, admin: true }];
  const code = { grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
  const clients = [
    // May ask for the admin scope: whether a token gets it depends on who signs in.
    { client_id: 'console', scope: ALL_SCOPES, ...code },
    // Never asks for it: not even an admin gets it through this one.
    { client_id: 'spa', ...code },
    { client_id: 'ops', client_secret: OPS_SECRET, grant_types: ['client_credentials'], redirect_uris: [], scope: ALL_SCOPES },
  ];
  files = await writeIssuerFiles('admin-scope', users, clients);
  svc = await startPipelineService({ embeddedIssuer: true, env: files.env });
  issuer = svc.config.auth.issuer;
});

afterAll(async () => {
  await svc?.stop();
  await files?.remove();
});

/** `user` signs in through `clientId` (code + PKCE) asking for every API scope; the token response. */
async function signIn(clientId: string, user: { username: string; password: string }): Promise<client.TokenEndpointResponse> {
  const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: `openid ${ALL_SCOPES}`,
    state: 's',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callback } = await browse(new CookieJar(), url, { issuer, redirectUri: REDIRECT, user });
  if (callback === undefined) throw new Error('the browser never reached the redirect URI');
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's', idTokenExpected: true });
}

/** The refresh token grant of a public client at the token endpoint. */
async function refresh(clientId: string, refreshToken: string): Promise<{ access_token: string; scope?: string }> {
  const response = await fetch(`${issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; scope?: string };
}

const scopesOf = (accessToken: string) => String(decodeJwt(accessToken).scope).split(' ').sort();

/** Starts a test as the token's subject; its correlation id. */
async function startTest(token: string): Promise<string> {
  const response = await authedFetch(`${svc.url}/tests`, { method: 'POST', token });
  expect(response.status).toBe(202);
  return ((await response.json()) as { correlationId: string }).correlationId;
}

describe("the admin scope in a user's token", () => {
  it('is not given to a user who is not an admin, through a client that may ask for it, nor at a refresh', async () => {
    const alice = await signIn('console', ALICE);
    expect(decodeJwt(alice.access_token)).toMatchObject({ sub: ALICE.sub, client_id: 'console' });
    expect(scopesOf(alice.access_token)).toEqual(['tests:read', 'tests:write']);
    expect(alice.scope?.split(' ')).not.toContain('tests:admin');
    const refreshed = await refresh('console', alice.refresh_token as string);
    expect(scopesOf(refreshed.access_token)).toEqual(['tests:read', 'tests:write']);

    // What it means: another subject's test is answered as unknown.
    const root = await signIn('console', ROOT);
    const rootsTest = await startTest(root.access_token);
    expect((await authedFetch(`${svc.url}/tests/${rootsTest}`, { token: alice.access_token })).status).toBe(404);
  });

  it("is given to an admin user through that client, and reads other subjects' tests", async () => {
    const alice = await signIn('console', ALICE);
    const alicesTest = await startTest(alice.access_token);
    const root = await signIn('console', ROOT);
    expect(scopesOf(root.access_token)).toEqual(['tests:admin', 'tests:read', 'tests:write']);
    expect(scopesOf((await refresh('console', root.refresh_token as string)).access_token)).toEqual(['tests:admin', 'tests:read', 'tests:write']);
    expect((await authedFetch(`${svc.url}/tests/${alicesTest}`, { token: root.access_token })).status).toBe(200);
  });

  it('is not given to an admin user through a client that may not ask for it', async () => {
    const root = await signIn('spa', ROOT);
    expect(scopesOf(root.access_token)).toEqual(['tests:read', 'tests:write']);
  });
});

describe('the admin scope in a client-credentials token', () => {
  it('follows the client alone: there is no user to be an admin', async () => {
    const config = await client.discovery(new URL(issuer), 'ops', OPS_SECRET, client.ClientSecretBasic(OPS_SECRET), {
      execute: [client.allowInsecureRequests],
    });
    const tokens = await client.clientCredentialsGrant(config, { scope: ALL_SCOPES });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'ops', client_id: 'ops' });
    expect(scopesOf(tokens.access_token)).toEqual(['tests:admin', 'tests:read', 'tests:write']);
  });
});
