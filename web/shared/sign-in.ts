/**
 * Sign-in from a page the service serves (GraphiQL, the dashboard) against the service's embedded
 * issuer: authorization code with PKCE (S256), redirecting back to the same page. Tokens stay in
 * memory only; the verifier waits in sessionStorage during the round trip to the login page and
 * is removed on return. A refresh token, when the issuer gives one, renews the access token
 * without a page load; the issuer rotates it on every use, so only the newest one is kept.
 */

/** What the service tells the page about signing in (null: no sign-in here). */
export interface SignInSettings {
  readonly clientId: string;
  readonly scope: string;
}

/** A signed-in user's tokens. */
export interface Session {
  readonly accessToken: string;
  /** The current refresh token (rotated: the previous one is spent), or null when none was issued. */
  readonly refreshToken: string | null;
  /** When the access token was issued and when it expires (epoch milliseconds). */
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly name: string | null;
}

/** How to start a sign-in. */
export interface StartOptions {
  /**
   * `none`: never show the login page; come back at once with a code when the issuer's session is
   * still open (its httpOnly cookie), or with `error=login_required` when it is not.
   * `login`: always show the login page, even while the issuer's session is open (after signing out).
   */
  readonly prompt?: 'none' | 'login';
}

/** A sign-in that did not succeed, with the issuer's error code (e.g. `login_required`). */
export class SignInError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SignInError';
  }
}

interface Discovery {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly revocation_endpoint?: string;
}

interface TokenAnswer {
  readonly access_token?: string;
  readonly refresh_token?: string;
  readonly expires_in?: number;
  readonly error?: string;
  readonly error_description?: string;
}

const pendingKey = () => `rcs.sign-in:${window.location.pathname}`;

/** The page itself is the redirect URI, registered for the client. */
export function redirectUri(): string {
  return `${window.location.origin}${window.location.pathname}`;
}

/** Sends the browser to the issuer's login; it comes back to this page with a code. */
export async function startSignIn(settings: SignInSettings, options: StartOptions = {}): Promise<void> {
  const discovery = await discover();
  const verifier = randomText(32);
  const state = randomText(16);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  sessionStorage.setItem(pendingKey(), JSON.stringify({ verifier, state }));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: settings.scope,
    state,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
    ...(options.prompt ? { prompt: options.prompt } : {}),
  }).toString();
  window.location.assign(url);
}

/**
 * Completes a sign-in when the page was opened by the issuer's redirect (`?code=…&state=…`);
 * null when it was not. The code and state are removed from the address bar either way (the
 * fragment stays). Throws a {@link SignInError} when the issuer refused.
 */
export async function finishSignIn(settings: SignInSettings): Promise<Session | null> {
  const params = new URLSearchParams(window.location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (code === null && error === null) return null;
  const pending = JSON.parse(sessionStorage.getItem(pendingKey()) ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem(pendingKey());
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`);
  if (error !== null) throw new SignInError(error, `Sign-in failed: ${error}${params.get('error_description') ? ` (${params.get('error_description')})` : ''}`);
  if (pending === null || params.get('state') !== pending.state)
    throw new SignInError('invalid_state', 'Sign-in failed: the answer does not belong to a sign-in started here. Try again.');

  const session = await tokenRequest(
    { grant_type: 'authorization_code', code: code as string, redirect_uri: redirectUri(), client_id: settings.clientId, code_verifier: pending.verifier },
    null,
  );
  const user = await fetch('/userinfo', { headers: { authorization: `Bearer ${session.accessToken}` } }).then(
    async (r) => (r.ok ? ((await r.json()) as { name?: string; sub: string }) : null),
    () => null,
  );
  return { ...session, name: user?.name ?? user?.sub ?? null };
}

/** A new access token (and the rotated refresh token) for `session`; throws when the grant is gone. */
export async function refreshSession(settings: SignInSettings, session: Session): Promise<Session> {
  if (session.refreshToken === null) throw new SignInError('no_refresh_token', 'The issuer gave no refresh token; sign in again.');
  return tokenRequest({ grant_type: 'refresh_token', refresh_token: session.refreshToken, client_id: settings.clientId }, session.name);
}

/**
 * Revokes `session`'s refresh token at the issuer, which ends its whole grant: the token cannot
 * renew anything afterwards, even if a copy survived somewhere. (The access token is a JWT the
 * API verifies on its own; it stays valid until it expires, minutes at most.) Throws when the
 * issuer did not confirm.
 */
export async function revokeSession(settings: SignInSettings, session: Session): Promise<void> {
  if (session.refreshToken === null) return;
  const { revocation_endpoint: endpoint } = await discover();
  if (endpoint === undefined) throw new Error('The issuer offers no revocation endpoint');
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: session.refreshToken, token_type_hint: 'refresh_token', client_id: settings.clientId }),
  });
  if (!response.ok) throw new Error(`The issuer did not revoke the session (${response.status})`);
}

async function tokenRequest(form: Record<string, string>, name: string | null): Promise<Session> {
  const discovery = await discover();
  const issuedAt = Date.now();
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const body = (await response.json()) as TokenAnswer;
  if (!response.ok || body.access_token === undefined) {
    throw new SignInError(
      body.error ?? String(response.status),
      `Sign-in failed: ${body.error ?? response.status}${body.error_description ? ` (${body.error_description})` : ''}`,
    );
  }
  return { accessToken: body.access_token, refreshToken: body.refresh_token ?? null, issuedAt, expiresAt: issuedAt + (body.expires_in ?? 0) * 1000, name };
}

let discovery: Promise<Discovery> | undefined;

function discover(): Promise<Discovery> {
  discovery ??= fetch('/.well-known/openid-configuration').then(async (response) => {
    if (!response.ok) throw new Error(`The issuer's discovery document could not be read (${response.status})`);
    return (await response.json()) as Discovery;
  });
  // A failed read is not remembered: the next call tries again.
  discovery.catch(() => (discovery = undefined));
  return discovery;
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
