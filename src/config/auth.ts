/**
 * The authentication part of the configuration: how access tokens are verified (`AUTH_*`) and the
 * embedded issuer's settings (`OIDC_*`). Read through the configuration's reader.
 */
import type { Reader } from './reader.js';
import { ConfigError } from '../base/errors.js';

/**
 * How access tokens are verified. `embedded`: tokens of the issuer built into this service (the
 * default when no external issuer is configured). `jwks`: an external issuer's keys, from
 * `AUTH_JWKS_URI` or found by discovery. `hs256`: a shared secret.
 */
export interface AuthConfig {
  readonly mode: 'embedded' | 'jwks' | 'hs256';
  /** This API's identifier: tokens must carry it in `aud`. */
  readonly audience: string;
  /** The trusted issuer (`iss`). For `embedded`, this service's own public URL. */
  readonly issuer: string;
  readonly jwksUri: URL | null;
  readonly hs256Secret: Uint8Array | null;
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
  /** How long a verified token is remembered (0: verify every time); never past its expiry. */
  readonly verifiedTokenCacheSeconds: number;
  /** Required `typ` header of access tokens, or null to accept any. */
  readonly tokenType: string | null;
  /** A scope that may read every test, whoever started it. */
  readonly adminScope: string;
}

/** The embedded OAuth 2.0 / OIDC authorization server. */
export interface IssuerConfig {
  readonly clientsFile: string | null;
  readonly usersFile: string | null;
  /** Private signing key as a JWK (JSON); generated at startup when absent. */
  readonly signingKey: Record<string, unknown> | null;
  /** Keys that sign the login cookies; generated at startup when absent. */
  readonly cookieKeys: readonly string[];
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  /** Where the issuer keeps sessions, grants, codes and refresh tokens (`OIDC_STORE`). */
  readonly store: 'memory' | 'redis';
}

/**
 * The embedded issuer's settings. In production an issuer that runs needs its keys configured: a
 * generated signing key invalidates every token at each restart and differs between replicas, and
 * a generated cookie key ends every sign-in session the same way.
 */
export function readIssuer(read: Reader, where: { production: boolean; runsIssuer: boolean; defaultStore: 'memory' | 'redis' }): IssuerConfig {
  const issuer: IssuerConfig = {
    clientsFile: read.string('OIDC_CLIENTS_FILE', '') || null,
    usersFile: read.string('OIDC_USERS_FILE', '') || null,
    signingKey: read.json('OIDC_SIGNING_KEY'),
    cookieKeys: read.list('OIDC_COOKIE_KEYS', [], /^.{32,}$/, 'key of at least 32 characters'),
    accessTokenTtlSeconds: read.int('OIDC_ACCESS_TOKEN_TTL_SECONDS', 600, { min: 10, max: 7200 }),
    refreshTokenTtlSeconds: read.int('OIDC_REFRESH_TOKEN_TTL_SECONDS', 14 * 86_400, { min: 60 }),
    store: read.oneOf('OIDC_STORE', where.defaultStore, ['memory', 'redis']),
  };
  if (where.production && where.runsIssuer) {
    const why =
      'is required with NODE_ENV=production when the embedded issuer runs (no AUTH_ISSUER): a generated key is lost at restart and differs between replicas';
    if (issuer.signingKey === null) throw new ConfigError('OIDC_SIGNING_KEY', why);
    if (issuer.cookieKeys.length === 0) throw new ConfigError('OIDC_COOKIE_KEYS', why);
  }
  return issuer;
}

/** Reads how access tokens are verified (`AUTH_*`, `PUBLIC_URL`). */
export function readAuth(read: Reader, port: number): AuthConfig {
  const secret = read.string('AUTH_HS256_SECRET', '');
  const externalIssuer = read.url('AUTH_ISSUER');
  const jwksUri = read.url('AUTH_JWKS_URI');
  const common = {
    audience: read.string('AUTH_AUDIENCE', 'urn:result-collection-service'),
    clockToleranceSeconds: read.int('AUTH_CLOCK_TOLERANCE_SECONDS', 5, { min: 0, max: 300 }),
    verifiedTokenCacheSeconds: read.int('AUTH_VERIFIED_TOKEN_CACHE_SECONDS', 60, { min: 0, max: 3600 }),
    // Set and empty turns the check off (issuers that do not type their access tokens).
    tokenType: read.isSetEmpty('AUTH_ACCESS_TOKEN_TYP') ? null : read.string('AUTH_ACCESS_TOKEN_TYP', 'at+jwt'),
    adminScope: read.string('AUTH_ADMIN_SCOPE', 'tests:admin'),
  };
  if (secret !== '') {
    if (Buffer.byteLength(secret, 'utf8') < 32) throw new ConfigError('AUTH_HS256_SECRET', 'must be at least 32 bytes (256 bits)');
    if (externalIssuer === null) throw new ConfigError('AUTH_ISSUER', 'is required with AUTH_HS256_SECRET (the trusted "iss" of the tokens)');
    const algorithms = read.optional('AUTH_ALGORITHMS');
    if (algorithms !== undefined && algorithms !== 'HS256') {
      throw new ConfigError('AUTH_ALGORITHMS', 'only HS256 can be used with AUTH_HS256_SECRET');
    }
    return {
      ...common,
      mode: 'hs256',
      issuer: read.string('AUTH_ISSUER', ''),
      jwksUri: null,
      hs256Secret: new TextEncoder().encode(secret),
      algorithms: ['HS256'],
    };
  }
  const algorithms = read.list('AUTH_ALGORITHMS', ['RS256', 'ES256'], /^(RS|PS|ES)(256|384|512)$|^EdDSA$/, 'algorithm (RS256, PS384, ES512, EdDSA, …)');
  if (externalIssuer !== null || jwksUri !== null) {
    if (externalIssuer === null) throw new ConfigError('AUTH_ISSUER', 'is required with AUTH_JWKS_URI (the trusted "iss" of the tokens)');
    return { ...common, mode: 'jwks', issuer: read.string('AUTH_ISSUER', ''), jwksUri, hs256Secret: null, algorithms };
  }
  const publicUrl = read.url('PUBLIC_URL') ?? new URL(`http://localhost:${port}`);
  return { ...common, mode: 'embedded', issuer: publicUrl.href.replace(/\/$/, ''), jwksUri: null, hs256Secret: null, algorithms: ['RS256'] };
}
