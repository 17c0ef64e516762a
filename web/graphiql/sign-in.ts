/**
 * Sign-in from the page against the service's embedded issuer: authorization code with PKCE
 * (S256), redirecting back to this page. The access token stays in memory only; the verifier
 * waits in sessionStorage during the round trip to the login page and is removed on return.
 */

/** What the service tells the page about signing in (null: paste a token in the Headers tab). */
export interface SignInSettings {
  readonly clientId: string;
  readonly scope: string;
}

/** A signed-in user's access token. */
export interface Session {
  readonly accessToken: string;
  readonly expiresAt: number;
  readonly name: string | null;
}

interface Discovery {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
}

const PENDING = 'rcs.graphiql.sign-in';

/** The page itself (`/graphql`) is the redirect URI, registered for the client. */
export function redirectUri(): string {
  return `${window.location.origin}${window.location.pathname}`;
}

/** Sends the browser to the issuer's login; it comes back to this page with a code. */
export async function startSignIn(settings: SignInSettings): Promise<void> {
  const discovery = await discover();
  const verifier = randomText(32);
  const state = randomText(16);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state }));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: settings.scope,
    state,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
  }).toString();
  window.location.assign(url);
}

/**
 * Completes a sign-in when the page was opened by the issuer's redirect (`?code=…&state=…`);
 * null when it was not. The code and state are removed from the address bar either way.
 */
export async function finishSignIn(settings: SignInSettings): Promise<Session | null> {
  const params = new URLSearchParams(window.location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (code === null && error === null) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem(PENDING);
  window.history.replaceState(null, '', window.location.pathname);
  if (error !== null) throw new Error(`Sign-in failed: ${error}${params.get('error_description') ? ` (${params.get('error_description')})` : ''}`);
  if (pending === null || params.get('state') !== pending.state) throw new Error('Sign-in failed: the answer does not belong to a sign-in started here. Try again.');

  const discovery = await discover();
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code as string, redirect_uri: redirectUri(), client_id: settings.clientId, code_verifier: pending.verifier }),
  });
  const body = (await response.json()) as { access_token?: string; expires_in?: number; error?: string; error_description?: string };
  if (!response.ok || body.access_token === undefined) throw new Error(`Sign-in failed: ${body.error ?? response.status}${body.error_description ? ` (${body.error_description})` : ''}`);
  const accessToken = body.access_token;
  const user = await fetch('/userinfo', { headers: { authorization: `Bearer ${accessToken}` } }).then(
    async (r) => (r.ok ? ((await r.json()) as { name?: string; sub: string }) : null),
    () => null,
  );
  return { accessToken, expiresAt: Date.now() + (body.expires_in ?? 0) * 1000, name: user?.name ?? user?.sub ?? null };
}

async function discover(): Promise<Discovery> {
  const response = await fetch('/.well-known/openid-configuration');
  if (!response.ok) throw new Error(`The issuer's discovery document could not be read (${response.status})`);
  return (await response.json()) as Discovery;
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
