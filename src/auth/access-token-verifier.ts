/**
 * Verifies bearer access tokens as a resource server must (RFC 9068, RFC 8725): a signature by a
 * trusted key with an algorithm from a fixed list, a trusted issuer, this API's audience, `exp`
 * present and not passed, `nbf` and `iat` not in the future, and the access-token `typ`. A valid
 * signature alone is never enough. Keys come from key-source.ts; jose's errors become the
 * service's in translate-jose-error.ts.
 */
import { decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { InvalidTokenError } from './auth-error.js';
import { createKeyResolver, type KeySource } from './key-source.js';
import type { VerifyAccessToken } from './principal.js';
import { translateJoseError } from './translate-jose-error.js';
import { cacheVerifiedTokens } from './verified-token-cache.js';

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

// Headers that point at a key of the sender's choosing. Keys come only from our configuration, so
// a token that names its own key is refused outright rather than merely failing its signature.
const KEY_POINTER_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

/** Creates the verifier. Keys are fetched lazily and cached (jose's remote JWKS cache). */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): VerifyAccessToken {
  const now = options.now ?? Date.now;
  const keyFor = createKeyResolver(options.keys, options.fetchTimeoutMs ?? 3000);

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
      throw translateJoseError(error);
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

function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `scope` (space-separated, RFC 9068) or `scp` (an array, as some issuers send). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  if (typeof payload.scope === 'string') return new Set(payload.scope.split(' ').filter(Boolean));
  if (Array.isArray(payload.scp)) return new Set(payload.scp.filter((s): s is string => typeof s === 'string'));
  return new Set();
}
