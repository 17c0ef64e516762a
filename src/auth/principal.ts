/** Who is calling, as established from a verified access token. */

/** The authenticated caller of one request or WebSocket connection. */
export interface Principal {
  /** The token's `sub`: a user, or the client itself for client credentials. */
  readonly subject: string;
  /** The OAuth client the token was issued to (`client_id` or `azp`), when the token says. */
  readonly clientId: string | null;
  readonly scopes: ReadonlySet<string>;
  /** When the token stops being accepted (its `exp` plus the clock tolerance), epoch milliseconds. */
  readonly expiresAt: number;
  readonly issuer: string;
}

/** Turns a bearer token into a {@link Principal}, or throws InvalidTokenError / AUTH_UNAVAILABLE (access-token-verifier.ts makes one). */
export type VerifyAccessToken = (token: string) => Promise<Principal>;

/** Scope names of this API. */
export const SCOPES = {
  read: 'tests:read',
  write: 'tests:write',
} as const;

/** True when the principal was granted `scope`. */
export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes.has(scope);
}

/** Who a principal's budgets and caps are counted for: its issuer and subject (the same over every transport). */
export function principalKey(principal: Principal): string {
  return `${principal.issuer}|${principal.subject}`;
}
