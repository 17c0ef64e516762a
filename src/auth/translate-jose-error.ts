/**
 * Translates jose's verification errors into the service's, by jose's stable `error.code` (never
 * by message text): a fault of the token is 401 `UNAUTHENTICATED` with a precise, client-safe
 * reason; a fault of fetching the keys is 503 `AUTH_UNAVAILABLE`, since it says nothing about the
 * token.
 */
import { errors } from 'jose';
import { ServiceError } from '../base/errors.js';
import { InvalidTokenError } from './auth-error.js';
import { keysUnavailable } from './key-source.js';

/**
 * Reasons for a claim that failed validation (`ERR_JWT_CLAIM_VALIDATION_FAILED`), by claim. A Map,
 * as every table looked up by a name that came with a request: a plain object would answer
 * `constructor` or `__proto__`.
 */
const CLAIM_REASONS: ReadonlyMap<string, string> = new Map([
  ['iss', 'the issuer is not trusted'],
  ['aud', 'the token is not for this API (audience)'],
  ['nbf', 'the token is not valid yet ("nbf" is in the future)'],
  ['exp', 'the token has no expiry ("exp")'],
  ['sub', 'the token has no subject ("sub")'],
  ['typ', 'the token is not an access token ("typ")'],
]);

/** Faults of the token, by jose error code. */
const TOKEN_REASONS: ReadonlyMap<string, string> = new Map([
  ['ERR_JWT_EXPIRED', 'the token has expired'],
  ['ERR_JOSE_ALG_NOT_ALLOWED', 'the signing algorithm is not allowed'],
  ['ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'the signature is invalid'],
  ['ERR_JWKS_NO_MATCHING_KEY', 'no trusted key matches the token'],
  ['ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'no trusted key matches the token'],
  ['ERR_JOSE_NOT_SUPPORTED', 'the token uses an unsupported feature'],
  ['ERR_JWS_INVALID', 'malformed token'],
  ['ERR_JWT_INVALID', 'malformed token'],
  ['ERR_JWE_INVALID', 'malformed token'],
  ['ERR_JWE_DECRYPTION_FAILED', 'malformed token'],
]);

/**
 * Faults of the key set, by jose error code: the JWKS endpoint timed out (`ERR_JWKS_TIMEOUT`),
 * answered something that is not a key set (`ERR_JWKS_INVALID`, `ERR_JWK_INVALID`), or answered
 * other than 200 or with a body that is not JSON (jose raises its generic `ERR_JOSE_GENERIC` only
 * there).
 */
const KEY_SET_FAULTS: ReadonlySet<string> = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JWK_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * The service error for what jose (or the key source) threw while verifying a token. Errors that
 * are already the service's pass through; anything that is not jose's is returned as it is (a
 * defect, answered as 500).
 */
export function translateJoseError(error: unknown): Error {
  if (error instanceof ServiceError) return error;
  if (!(error instanceof errors.JOSEError)) return error instanceof Error ? error : new Error(String(error));
  if (error.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    const { claim } = error as errors.JWTClaimValidationFailed;
    return new InvalidTokenError(CLAIM_REASONS.get(claim) ?? `the "${claim}" claim is invalid`);
  }
  const reason = TOKEN_REASONS.get(error.code);
  if (reason !== undefined) return new InvalidTokenError(reason);
  if (KEY_SET_FAULTS.has(error.code)) return keysUnavailable(error);
  // A code added by a later jose: something about the token jose could not accept.
  return new InvalidTokenError('malformed token');
}
