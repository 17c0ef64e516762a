/**
 * jose's verification errors become the service's by their `code`. Each error here is the real one
 * jose throws from a real call (a real token, real keys, a real JWKS endpoint on loopback), so a
 * jose upgrade that changes what it throws shows up here.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, createLocalJWKSet, createRemoteJWKSet, errors, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../../src/auth/auth-error.js';
import { createKeyResolver } from '../../../src/auth/key-source.js';
import { translateJoseError } from '../../../src/auth/translate-jose-error.js';
import { ServiceError } from '../../../src/base/errors.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'urn:result-collection-service';
const secret = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!');
const otherSecret = new TextEncoder().encode('another-secret-of-at-least-32-bytes!!!');
const now = () => Math.floor(Date.now() / 1000);

/** An HS256 token with sensible claims, overridden by `claims` (undefined removes one). */
function token(claims: JWTPayload = {}, header: { typ?: string; kid?: string; alg?: string } = {}, key: Uint8Array = secret) {
  const payload = Object.fromEntries(
    Object.entries({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60, iat: now(), ...claims }).filter(([, v]) => v !== undefined),
  );
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...header }).sign(key);
}

const verifyOptions = { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], requiredClaims: ['exp', 'sub'], typ: 'at+jwt' };

/** The error jose throws for `call`; fails the test if it does not throw. */
async function joseError(call: Promise<unknown>): Promise<errors.JOSEError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'jose should have refused').toBeInstanceOf(errors.JOSEError);
  return error as errors.JOSEError;
}

function expectRefused(error: unknown, reason: string) {
  const translated = translateJoseError(error);
  expect(translated).toBeInstanceOf(InvalidTokenError);
  expect((translated as ServiceError).code).toBe('UNAUTHENTICATED');
  expect((translated as ServiceError).httpStatus).toBe(401);
  expect(translated.message).toBe(`Access token refused: ${reason}.`);
}

function expectUnavailable(error: unknown) {
  const translated = translateJoseError(error);
  expect(translated).toBeInstanceOf(ServiceError);
  expect((translated as ServiceError).code).toBe('AUTH_UNAVAILABLE');
  expect((translated as ServiceError).httpStatus).toBe(503);
  expect(translated.cause).toBe(error);
}

describe('token faults: 401 UNAUTHENTICATED with a precise reason', () => {
  it.each<[string, () => Promise<unknown>, string, string]>([
    ['an expired token', async () => jwtVerify(await token({ exp: now() - 60 }), secret, verifyOptions), 'ERR_JWT_EXPIRED', 'the token has expired'],
    [
      'a bad signature',
      async () => jwtVerify(await token({}, {}, otherSecret), secret, verifyOptions),
      'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      'the signature is invalid',
    ],
    [
      'a wrong audience',
      async () => jwtVerify(await token({ aud: 'urn:another-api' }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the token is not for this API (audience)',
    ],
    [
      'an untrusted issuer',
      async () => jwtVerify(await token({ iss: 'https://evil.test' }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the issuer is not trusted',
    ],
    [
      'a token not valid yet',
      async () => jwtVerify(await token({ nbf: now() + 3600 }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the token is not valid yet ("nbf" is in the future)',
    ],
    [
      'a token without expiry',
      async () => jwtVerify(await token({ exp: undefined }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the token has no expiry ("exp")',
    ],
    [
      'a token without subject',
      async () => jwtVerify(await token({ sub: undefined }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the token has no subject ("sub")',
    ],
    [
      'an ID token (wrong typ)',
      async () => jwtVerify(await token({}, { typ: 'JWT' }), secret, verifyOptions),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'the token is not an access token ("typ")',
    ],
    [
      'an algorithm not allowed',
      async () => jwtVerify(await token(), secret, { ...verifyOptions, algorithms: ['RS256'] }),
      'ERR_JOSE_ALG_NOT_ALLOWED',
      'the signing algorithm is not allowed',
    ],
    [
      'a garbled signature segment',
      async () => jwtVerify(`${(await token()).split('.').slice(0, 2).join('.')}.%%%`, secret, verifyOptions),
      'ERR_JWS_INVALID',
      'malformed token',
    ],
    [
      'a signed payload that is not a claims object',
      async () =>
        jwtVerify(await new CompactSign(new TextEncoder().encode('[1]')).setProtectedHeader({ alg: 'HS256' }).sign(secret), secret, { algorithms: ['HS256'] }),
      'ERR_JWT_INVALID',
      'malformed token',
    ],
  ])('%s', async (_case, call, code, reason) => {
    const error = await joseError(call());
    expect(error.code).toBe(code);
    expectRefused(error, reason);
  });

  it('an unknown kid: no key of the set matches (ERR_JWKS_NO_MATCHING_KEY)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'known', alg: 'RS256' }] });
    const signed = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 })
      .setProtectedHeader({ alg: 'RS256', kid: 'unknown', typ: 'at+jwt' })
      .sign(privateKey);
    const error = await joseError(jwtVerify(signed, keys, { ...verifyOptions, algorithms: ['RS256'] }));
    expect(error.code).toBe('ERR_JWKS_NO_MATCHING_KEY');
    expectRefused(error, 'no trusted key matches the token');
  });

  it('two keys of the set match a token without kid (ERR_JWKS_MULTIPLE_MATCHING_KEYS)', async () => {
    const [a, b] = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256')]);
    const keys = createLocalJWKSet({
      keys: [
        { ...(await exportJWK(a.publicKey)), alg: 'RS256' },
        { ...(await exportJWK(b.publicKey)), alg: 'RS256' },
      ],
    });
    const signed = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt' })
      .sign(b.privateKey);
    const error = await joseError(jwtVerify(signed, keys, { ...verifyOptions, algorithms: ['RS256'] }));
    expect(error.code).toBe('ERR_JWKS_MULTIPLE_MATCHING_KEYS');
    expectRefused(error, 'no trusted key matches the token');
  });
});

describe('key set faults: 503 AUTH_UNAVAILABLE', () => {
  let server: Server;
  let base: string;
  const answers: Record<string, (res: import('node:http').ServerResponse) => void> = {
    '/slow': () => {}, // never answers
    '/error': (res) => res.writeHead(500).end('boom'),
    '/not-json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>'),
    '/not-a-key-set': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":"none"}'),
  };

  beforeAll(async () => {
    server = createServer((req, res) => answers[req.url ?? '']?.(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const rs256 = async () => {
    const { privateKey } = await generateKeyPair('RS256');
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 })
      .setProtectedHeader({ alg: 'RS256', kid: 'k', typ: 'at+jwt' })
      .sign(privateKey);
  };
  const remote = (path: string) => createRemoteJWKSet(new URL(path, base), { timeoutDuration: 200 });

  it.each([
    ['the JWKS endpoint times out', '/slow', 'ERR_JWKS_TIMEOUT'],
    ['the JWKS endpoint answers 500', '/error', 'ERR_JOSE_GENERIC'],
    ['the JWKS endpoint answers a body that is not JSON', '/not-json', 'ERR_JOSE_GENERIC'],
    ['the JWKS endpoint answers JSON that is not a key set', '/not-a-key-set', 'ERR_JWKS_INVALID'],
  ])('%s', async (_case, path, code) => {
    const error = await joseError(jwtVerify(await rs256(), remote(path), { ...verifyOptions, algorithms: ['RS256'] }));
    expect(error.code).toBe(code);
    expectUnavailable(error);
  });

  it('the JWKS endpoint refuses connections: the key source reports the keys unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const keys = (await createKeyResolver({ kind: 'jwks', uri: new URL(`http://127.0.0.1:${port}/jwks`) }, 500)()) as Parameters<typeof jwtVerify>[1];
    const error = await jwtVerify(await rs256(), keys as never, { ...verifyOptions, algorithms: ['RS256'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not jose's: the fetch below it failed, and the key source said so in the service's terms.
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('AUTH_UNAVAILABLE');
    expect(((error as ServiceError).cause as Error).message).toBe('fetch failed');
    expect(translateJoseError(error)).toBe(error);
  });
});

describe('errors that are not jose token errors', () => {
  it('passes the service errors through as they are', () => {
    const unavailable = new ServiceError('AUTH_UNAVAILABLE', 'The token issuer cannot be reached to verify tokens; try again shortly.');
    expect(translateJoseError(unavailable)).toBe(unavailable);
  });

  it('returns any other error as it is (a defect, answered as 500)', () => {
    const defect = new TypeError('cannot read properties of undefined');
    expect(translateJoseError(defect)).toBe(defect);
  });

  it('maps every error class jose exports to a service error with a code of ErrorCode', () => {
    const known = new Set(['UNAUTHENTICATED', 'AUTH_UNAVAILABLE']);
    const classes = Object.values(errors).filter((value): value is typeof errors.JOSEError => typeof value === 'function' && value.prototype instanceof Error);
    expect(classes.length).toBeGreaterThan(10);
    for (const JoseError of classes) {
      const translated = translateJoseError(new (JoseError as unknown as new (message: string) => errors.JOSEError)('x'));
      expect(translated, JoseError.name).toBeInstanceOf(ServiceError);
      expect(known.has((translated as ServiceError).code), `${JoseError.name} → ${(translated as ServiceError).code}`).toBe(true);
    }
  });
});

describe('a claim named like a property of every object', () => {
  it('is refused with its own name, not with what a plain table answers for it', async () => {
    // jose names the claim it checked: a required claim named `constructor` or `toString` once
    // answered Object's own function as the reason.
    for (const claim of ['constructor', 'toString', '__proto__']) {
      const error = await joseError(jwtVerify(await token(), secret, { ...verifyOptions, requiredClaims: [claim] }));
      expectRefused(error, `the "${claim}" claim is invalid`);
    }
  });
});
