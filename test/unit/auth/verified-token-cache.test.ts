import { describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../../src/auth/auth-error.js';
import type { Principal, VerifyAccessToken } from '../../../src/auth/principal.js';
import { cacheVerifiedTokens } from '../../../src/auth/verified-token-cache.js';

function setup(expiresAt: number) {
  let clock = 1_000_000;
  const calls: string[] = [];
  // The seam under the cache: any verifier; this one accepts tokens starting with "ok".
  const verify: VerifyAccessToken = async (token) => {
    calls.push(token);
    if (!token.startsWith('ok')) throw new InvalidTokenError('the signature is invalid');
    return { subject: token, clientId: null, scopes: new Set(['tests:read']), expiresAt, issuer: 'https://issuer.test' } satisfies Principal;
  };
  return { calls, verify, now: () => clock, advance: (ms: number) => (clock += ms) };
}

describe('verified token cache', () => {
  it('verifies a token once and answers repeats from memory until the maximum age', async () => {
    const t = setup(1_000_000 + 3_600_000);
    const cached = cacheVerifiedTokens(t.verify, { maxAgeMs: 60_000, maxEntries: 100, now: t.now });
    const first = await cached('ok-a');
    expect(await cached('ok-a')).toBe(first);
    t.advance(59_999);
    await cached('ok-a');
    expect(t.calls).toEqual(['ok-a']);
    t.advance(1);
    await cached('ok-a');
    expect(t.calls).toEqual(['ok-a', 'ok-a']);
  });

  it('never answers a token past its expiry from memory', async () => {
    const t = setup(1_000_000 + 10_000);
    const cached = cacheVerifiedTokens(t.verify, { maxAgeMs: 60_000, maxEntries: 100, now: t.now });
    await cached('ok-a');
    t.advance(9_999);
    await cached('ok-a');
    expect(t.calls).toHaveLength(1);
    t.advance(1);
    await cached('ok-a');
    expect(t.calls).toHaveLength(2);
  });

  it('remembers no failure: a refused token is checked again every time', async () => {
    const t = setup(1_000_000 + 3_600_000);
    const cached = cacheVerifiedTokens(t.verify, { maxAgeMs: 60_000, maxEntries: 100, now: t.now });
    await expect(cached('bad')).rejects.toThrow(/signature/);
    await expect(cached('bad')).rejects.toThrow(/signature/);
    expect(t.calls).toEqual(['bad', 'bad']);
  });

  it('holds at most maxEntries tokens, dropping the oldest', async () => {
    const t = setup(1_000_000 + 3_600_000);
    const cached = cacheVerifiedTokens(t.verify, { maxAgeMs: 60_000, maxEntries: 2, now: t.now });
    await cached('ok-1');
    await cached('ok-2');
    await cached('ok-3');
    await cached('ok-3');
    await cached('ok-2');
    expect(t.calls).toEqual(['ok-1', 'ok-2', 'ok-3']);
    await cached('ok-1');
    expect(t.calls).toEqual(['ok-1', 'ok-2', 'ok-3', 'ok-1']);
  });

  it('holds at most maxBytes of tokens, dropping the oldest, and does not keep one larger than all of it', async () => {
    const t = setup(1_000_000 + 3_600_000);
    // Room for two tokens of 2,000 characters (600 + 4,000 bytes each), not three.
    const cached = cacheVerifiedTokens(t.verify, { maxAgeMs: 60_000, maxEntries: 100, maxBytes: 10_000, now: t.now });
    const long = (n: number) => `ok-${n}-${'x'.repeat(1995)}`;
    for (const n of [1, 2, 3]) await cached(long(n));
    await cached(long(3));
    await cached(long(2));
    expect(t.calls.length).toBe(3);
    await cached(long(1));
    expect(t.calls.length).toBe(4);
    const huge = `ok-${'x'.repeat(10_000)}`;
    await cached(huge);
    await cached(huge);
    expect(t.calls.slice(4)).toEqual([huge, huge]);
  });

  it('is the verifier itself when disabled', () => {
    const t = setup(0);
    expect(cacheVerifiedTokens(t.verify, { maxAgeMs: 0, maxEntries: 100 })).toBe(t.verify);
  });
});
