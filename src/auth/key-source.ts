/**
 * Where the keys that verify access tokens come from: a shared secret, keys held in this process
 * (the embedded issuer's), an issuer's JWKS URL, or an issuer found through OIDC discovery. Keys
 * come only from configuration, never from the token.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { ServiceError } from '../base/errors.js';

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

/** Resolves the key (or key set) to verify with; rejects with AUTH_UNAVAILABLE when it cannot be fetched. */
export type KeyResolver = () => Promise<JWTVerifyGetKey | KeyObject>;

/** Creates the resolver of `source`; remote keys are fetched lazily and cached (jose's remote JWKS cache). */
export function createKeyResolver(source: KeySource, timeoutMs: number): KeyResolver {
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
      const set = remoteKeys(source.uri, timeoutMs);
      return async () => set;
    }
    case 'discovery': {
      let pending: Promise<JWTVerifyGetKey> | undefined;
      return () => {
        pending ??= discoverJwks(source.issuer, timeoutMs).catch((error: unknown) => {
          pending = undefined; // retry discovery on the next request
          throw error;
        });
        return pending;
      };
    }
  }
}

/** The signing keys cannot be had: nothing is known about the token, so the answer is 503. */
export function keysUnavailable(cause: unknown): ServiceError {
  return new ServiceError('AUTH_UNAVAILABLE', 'The signing keys cannot be fetched to verify tokens; try again shortly.', { cause });
}

/**
 * jose's remote key set. What jose itself raises (timeouts, bad responses, no matching key) is
 * translated by its code later; anything else comes from the fetch below it (connection refused,
 * DNS), which says nothing about the token: the keys are unavailable.
 */
function remoteKeys(uri: URL, timeoutMs: number): JWTVerifyGetKey {
  const set = createRemoteJWKSet(uri, { timeoutDuration: timeoutMs });
  return async (header, token) => {
    try {
      return await set(header, token);
    } catch (error) {
      throw error instanceof errors.JOSEError ? error : keysUnavailable(error);
    }
  };
}

/** Finds the issuer's `jwks_uri` through OIDC discovery (and checks the document's `issuer`). */
async function discoverJwks(issuer: string, timeoutMs: number): Promise<JWTVerifyGetKey> {
  const url = new URL('.well-known/openid-configuration', issuer.endsWith('/') ? issuer : `${issuer}/`);
  let document: { issuer?: unknown; jwks_uri?: unknown };
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
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
  return remoteKeys(uri, timeoutMs);
}
