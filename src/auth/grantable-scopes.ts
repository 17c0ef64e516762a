/**
 * Which API scopes a token of the embedded issuer may carry. A client's `scope` (clients file) is
 * what the client may ask for; the admin scope additionally needs a user marked `"admin": true`
 * (users file) when the token is a user's. A client-credentials token has no user: the client acts
 * for itself and keeps what the clients file allows it.
 */
import type { ClientEntry, UserEntry } from './credentials.js';
import { SCOPES } from './principal.js';

/** Whom a token is for: the client itself (client credentials), or a user, unknown until signed in. */
export type TokenHolder = { readonly kind: 'client' } | { readonly kind: 'user'; readonly sub: string | undefined };

/** The API scopes a client's token may carry for a holder, in a fixed order. */
export type GrantableScopes = (clientId: string, holder: TokenHolder) => readonly string[];

/** The scopes a client may be granted when its entry names none. */
const DEFAULT_CLIENT_SCOPES = [SCOPES.read, SCOPES.write];

/** Builds the rule over the clients and users files as loaded. */
export function createGrantableScopes(options: { clients: readonly ClientEntry[]; users: readonly UserEntry[]; adminScope: string }): GrantableScopes {
  const apiScopes = [SCOPES.read, SCOPES.write, options.adminScope];
  const allowed = new Map(
    options.clients.map((c) => [c.client_id, new Set(c.scope === undefined ? DEFAULT_CLIENT_SCOPES : c.scope.split(' ').filter(Boolean))]),
  );
  const admins = new Set(options.users.filter((u) => u.admin).map((u) => u.sub));
  return (clientId, holder) => {
    const client = allowed.get(clientId) ?? new Set<string>();
    // A user not known yet (the authorization request before sign-in) is not an admin: the
    // request is evaluated again once the user has signed in.
    const mayAdmin = holder.kind === 'client' || (holder.sub !== undefined && admins.has(holder.sub));
    return apiScopes.filter((scope) => client.has(scope) && (scope !== options.adminScope || mayAdmin));
  };
}
