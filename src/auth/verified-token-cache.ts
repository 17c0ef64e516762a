/**
 * Remembers tokens that passed verification, so a client sending the same token on every request
 * pays for the signature check once rather than every time. Only successes are remembered; a hit
 * is used until the earlier of the token's own expiry and `maxAgeMs` after it was verified (which
 * bounds how long a token signed by a key the issuer has since withdrawn stays accepted). The
 * cache is bounded: past `maxEntries` the oldest entries go first.
 */
import type { VerifyAccessToken } from './access-token-verifier.js';
import type { Principal } from './principal.js';

/** Options of {@link cacheVerifiedTokens}. */
export interface VerifiedTokenCacheOptions {
  readonly maxAgeMs: number;
  readonly maxEntries: number;
  readonly now?: () => number;
}

/** Wraps `verify` with the cache; `maxAgeMs` 0 returns `verify` itself. */
export function cacheVerifiedTokens(verify: VerifyAccessToken, options: VerifiedTokenCacheOptions): VerifyAccessToken {
  if (options.maxAgeMs <= 0 || options.maxEntries <= 0) return verify;
  const now = options.now ?? Date.now;
  // Insertion order is verification order, so the first entry is always the oldest.
  const entries = new Map<string, { readonly principal: Principal; readonly until: number }>();
  return async (token) => {
    const hit = entries.get(token);
    if (hit !== undefined) {
      if (now() < hit.until) return hit.principal;
      entries.delete(token);
    }
    const principal = await verify(token);
    const at = now();
    const until = Math.min(principal.expiresAt, at + options.maxAgeMs);
    if (until > at) {
      entries.set(token, { principal, until });
      if (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
    }
    return principal;
  };
}
