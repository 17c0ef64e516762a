/**
 * Remembers tokens that passed verification, so a client sending the same token on every request
 * pays for the signature check once rather than every time. Only successes are remembered; a hit
 * is used until the earlier of the token's own expiry and `maxAgeMs` after it was verified (which
 * bounds how long a token signed by a key the issuer has since withdrawn stays accepted). The
 * cache is bounded in entries and in bytes (a token is as long as the request lets it be, and is
 * the key): past `maxEntries` or `maxBytes` the oldest entries go first.
 */
import type { Principal, VerifyAccessToken } from './principal.js';

/** Options of {@link cacheVerifiedTokens}. */
export interface VerifiedTokenCacheOptions {
  readonly maxAgeMs: number;
  readonly maxEntries: number;
  /** Bytes the entries may hold, as {@link entryBytes} counts them (default 8 MiB). */
  readonly maxBytes?: number;
  readonly now?: () => number;
}

/** Bytes an entry holds beyond its token's text: its principal (scopes included) and its map slot. */
const ENTRY_OVERHEAD = 600;
const entryBytes = (token: string) => ENTRY_OVERHEAD + 2 * token.length;

/** Wraps `verify` with the cache; `maxAgeMs` 0 returns `verify` itself. */
export function cacheVerifiedTokens(verify: VerifyAccessToken, options: VerifiedTokenCacheOptions): VerifyAccessToken {
  if (options.maxAgeMs <= 0 || options.maxEntries <= 0) return verify;
  const now = options.now ?? Date.now;
  // Insertion order is verification order, so the first entry is always the oldest.
  const entries = new Map<string, { readonly principal: Principal; readonly until: number }>();
  const maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  let bytes = 0;
  const remove = (token: string) => {
    if (entries.delete(token)) bytes -= entryBytes(token);
  };
  return async (token) => {
    const hit = entries.get(token);
    if (hit !== undefined) {
      if (now() < hit.until) return hit.principal;
      remove(token);
    }
    const principal = await verify(token);
    const at = now();
    const until = Math.min(principal.expiresAt, at + options.maxAgeMs);
    if (until > at && entryBytes(token) <= maxBytes && !entries.has(token)) {
      entries.set(token, { principal, until });
      bytes += entryBytes(token);
      while (entries.size > options.maxEntries || bytes > maxBytes) remove(entries.keys().next().value as string);
    }
    return principal;
  };
}
