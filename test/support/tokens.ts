/**
 * Real signed access tokens for tests. The default test service verifies HS256 tokens of a test
 * issuer; the auth tests also use RS256 keys and the embedded issuer.
 */
import { SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose';

export const TEST_ISSUER = 'https://issuer.test.invalid';
export const TEST_AUDIENCE = 'urn:result-collection-service';
export const TEST_SECRET = 'test-secret-of-at-least-thirty-two-bytes!';

/** Environment for a service that trusts the test issuer's HS256 tokens. */
export const HS256_ENV = {
  AUTH_ISSUER: TEST_ISSUER,
  AUTH_HS256_SECRET: TEST_SECRET,
  AUTH_AUDIENCE: TEST_AUDIENCE,
} as const;

/** Signs an HS256 access token; `claims` and `header` override the defaults. */
export async function mintToken(
  claims: JWTPayload & { scope?: string } = {},
  options: { header?: Partial<JWTHeaderParameters>; secret?: string; expiresInSeconds?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    iss: TEST_ISSUER,
    aud: TEST_AUDIENCE,
    sub: 'tester',
    scope: 'tests:read tests:write',
    iat: now,
    exp: now + (options.expiresInSeconds ?? 300),
    ...claims,
  };
  for (const [key, value] of Object.entries(payload)) if (value === undefined) delete payload[key];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...options.header } as JWTHeaderParameters)
    .sign(new TextEncoder().encode(options.secret ?? TEST_SECRET));
}

let fallback: Promise<string> | undefined;
/** A token for subject `tester` with read and write scopes, minted once per test file. */
export function defaultToken(): Promise<string> {
  fallback ??= mintToken({}, { expiresInSeconds: 3600 });
  return fallback;
}

/** `fetch` with the default token (or `token`) as a bearer header. */
export async function authedFetch(url: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  const token = init.token ?? (await defaultToken());
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}
