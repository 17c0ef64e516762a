/**
 * Verifies bearer access tokens as a resource server must (RFC 9068, RFC 8725): a signature by a
 * trusted key with an algorithm from a fixed list, a trusted issuer, this API's audience, `exp`
 * present and not passed, `nbf` and `iat` not in the future, and the access-token `typ`. A valid
 * signature alone is never enough.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { InvalidTokenError } from './auth-error.js';
import type { Principal } from './principal.js';
import { cacheVerifiedTokens } from './verified-token-cache.js';

/** Where the verification keys come from. */
export type KeySource =
  /** An issuer's JWKS URL, fetched and cached. */
  | { readonly kind: 'jwks'; readonly uri: URL }
  /** An issuer whose JWKS URL is found through OIDC discovery. */
  | { readonly kind: 'discovery'; readonly issuer: string }
  /** Public keys held in this process (the embedded issuer's). */
  | { readonly kind: 'local'; readonly jwks: JSONWebKeySet }
  /** A shared HS256 secret. */
  | { readonly kind: 'secret'; readonly secret: Uint8Array };

/** Options of {@link createAccessTokenVerifier}. */
export interface AccessTokenVerifierOptions {
  readonly keys: KeySource;
  /** Allowed `alg` values, fixed here and never taken from the token. */
  readonly algorithms: readonly string[];
  /** Trusted `iss` values. */
  readonly issuers: readonly string[];
  /** This API's identifier; the token's `aud` must contain it. */
  readonly audience: string;
  readonly clockToleranceSeconds: number;
  /** Required `typ` header (e.g. `at+jwt`), or null to accept any. */
  readonly tokenType: string | null;
  /** How long a key or discovery fetch may take before verification fails. */
  readonly fetchTimeoutMs?: number;
  /** How long a verified token is remembered (see verified-token-cache.ts); 0 or absent: never. */
  readonly cacheSeconds?: number;
  readonly now?: () => number;
}

/** Turns a bearer token into a {@link Principal}, or throws InvalidTokenError / AUTH_UNAVAILABLE. */
export type VerifyAccessToken = (token: string) => Promise<Principal>;

// Headers that point at a key of the sender's choosing. Keys come only from our configuration, so
// a token that names its own key is refused outright rather than merely failing its signature.
const KEY_POINTER_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

/** Creates the verifier. Keys are fetched lazily and cached (jose's remote JWKS cache). */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): VerifyAccessToken {
  const now = options.now ?? Date.now;
  const timeoutDuration = options.fetchTimeoutMs ?? 3000;
  const keyFor = createKeyResolver(options.keys, timeoutDuration);

  const verify: VerifyAccessToken = async (token) => {
    const parts = token.split('.');
    if (parts.length === 5) throw new InvalidTokenError('encrypted tokens (JWE) are not accepted');
    if (parts.length !== 3) throw new InvalidTokenError('not a signed JWT');
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new InvalidTokenError('malformed header');
    }
    for (const name of KEY_POINTER_HEADERS) {
      if (name in header) throw new InvalidTokenError(`the "${name}" header is not accepted`);
    }
    // No JWS extension is understood here, so any critical one makes the token unusable (RFC 7515 §4.1.11).
    if ('crit' in header) throw new InvalidTokenError('the "crit" header names extensions this API does not support');

    let payload: JWTPayload;
    try {
      const key = await keyFor();
      ({ payload } = await jwtVerify(token, key as JWTVerifyGetKey, {
        algorithms: [...options.algorithms],
        issuer: [...options.issuers],
        audience: options.audience,
        clockTolerance: options.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(now()),
        ...(options.tokenType === null ? {} : { typ: options.tokenType }),
      }));
    } catch (error) {
      throw translate(error);
    }

    if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidTokenError('the token has no subject ("sub")');
    const nowSeconds = now() / 1000;
    if (typeof payload.iat === 'number' && payload.iat > nowSeconds + options.clockToleranceSeconds) {
      throw new InvalidTokenError('"iat" is in the future');
    }
    return {
      subject: payload.sub as string,
      clientId: stringClaim(payload.client_id) ?? stringClaim(payload.azp),
      scopes: scopesOf(payload),
      // The instant this verifier stops accepting the token: `exp` plus the tolerance, so a live
      // WebSocket is closed exactly when a new request with the same token would be refused.
      expiresAt: ((payload.exp as number) + options.clockToleranceSeconds) * 1000,
      issuer: payload.iss as string,
    };
  };
  return cacheVerifiedTokens(verify, { maxAgeMs: (options.cacheSeconds ?? 0) * 1000, maxEntries: 10_000, now });
}

function createKeyResolver(source: KeySource, timeoutDuration: number): () => Promise<JWTVerifyGetKey | KeyObject> {
  switch (source.kind) {
    case 'secret': {
      // Imported once: handing jose the raw bytes would import them again on every verification.
      const key = createSecretKey(source.secret);
      return async () => key;
    }
    case 'local': {
      const set = createLocalJWKSet(source.jwks);
      return async () => set;
    }
    case 'jwks': {
      const set = createRemoteJWKSet(source.uri, { timeoutDuration });
      return async () => set;
    }
    case 'discovery': {
      let pending: Promise<JWTVerifyGetKey> | undefined;
      return () => {
        pending ??= discoverJwks(source.issuer, timeoutDuration).catch((error: unknown) => {
          pending = undefined; // retry discovery on the next request
          throw error;
        });
        return pending;
      };
    }
  }
}

/** Finds the issuer's `jwks_uri` through OIDC discovery (and checks the document's `issuer`). */
async function discoverJwks(issuer: string, timeoutDuration: number): Promise<JWTVerifyGetKey> {
  const url = new URL('.well-known/openid-configuration', issuer.endsWith('/') ? issuer : `${issuer}/`);
  let document: { issuer?: unknown; jwks_uri?: unknown };
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutDuration), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    document = (await response.json()) as typeof document;
  } catch (error) {
    throw new ServiceError('AUTH_UNAVAILABLE', 'The token issuer cannot be reached to verify tokens; try again shortly.', { cause: error });
  }
  if (document.issuer !== issuer || typeof document.jwks_uri !== 'string') {
    throw new ServiceError('AUTH_UNAVAILABLE', 'The token issuer published an unusable discovery document.');
  }
  let uri: URL;
  try {
    uri = new URL(document.jwks_uri);
  } catch {
    throw new ServiceError('AUTH_UNAVAILABLE', 'The token issuer published an unusable discovery document.');
  }
  return createRemoteJWKSet(uri, { timeoutDuration });
}

/** Maps jose's errors to a precise, client-safe reason. */
function translate(error: unknown): Error {
  if (error instanceof ServiceError) return error;
  if (error instanceof errors.JWTExpired) return new InvalidTokenError('the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    const reasons: Record<string, string> = {
      iss: 'the issuer is not trusted',
      aud: 'the token is not for this API (audience)',
      nbf: 'the token is not valid yet ("nbf" is in the future)',
      exp: 'the token has no expiry ("exp")',
      sub: 'the token has no subject ("sub")',
      typ: 'the token is not an access token ("typ")',
    };
    return new InvalidTokenError(reasons[error.claim] ?? `the "${error.claim}" claim is invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return new InvalidTokenError('the signing algorithm is not allowed');
  if (error instanceof errors.JWSSignatureVerificationFailed) return new InvalidTokenError('the signature is invalid');
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new InvalidTokenError('no trusted key matches the token');
  }
  if (error instanceof errors.JOSENotSupported) return new InvalidTokenError('the token uses an unsupported feature');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || isFetchFailure(error)) {
    return new ServiceError('AUTH_UNAVAILABLE', 'The signing keys cannot be fetched to verify tokens; try again shortly.', { cause: error });
  }
  // What remains of jose's errors from fetching keys (an HTTP error status, a body that is not a
  // key set) says nothing about the token: the keys are unavailable.
  if (error instanceof errors.JOSEError && /JSON Web Key Set|200 OK/i.test(error.message)) {
    return new ServiceError('AUTH_UNAVAILABLE', 'The signing keys cannot be fetched to verify tokens; try again shortly.', { cause: error });
  }
  if (error instanceof errors.JOSEError) return new InvalidTokenError('malformed token');
  return error instanceof Error ? error : new Error(String(error));
}

function isFetchFailure(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}

function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `scope` (space-separated, RFC 9068) or `scp` (an array, as some issuers send). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  if (typeof payload.scope === 'string') return new Set(payload.scope.split(' ').filter(Boolean));
  if (Array.isArray(payload.scp)) return new Set(payload.scp.filter((s): s is string => typeof s === 'string'));
  return new Set();
}
