/** An HS256 access token for the services the benchmarks start (they trust BENCH_AUTH_ENV). */
import { SignJWT } from 'jose';

const secret = 'benchmark-secret-of-at-least-thirty-two-bytes';
const issuer = 'https://bench.invalid';
const audience = 'urn:result-collection-service';

/** Environment of a service that accepts {@link benchToken}'s tokens. */
export const BENCH_AUTH_ENV = { AUTH_ISSUER: issuer, AUTH_HS256_SECRET: secret, AUTH_AUDIENCE: audience };

/** A token for subject `bench` that may read every test and start new ones, valid for an hour. */
export function benchToken(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'tests:read tests:write tests:admin' })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject('bench')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(secret));
}
