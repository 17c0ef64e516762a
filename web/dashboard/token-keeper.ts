/**
 * Holds the signed-in user's tokens in memory (never in localStorage, sessionStorage or a cookie a
 * script can read) and renews the access token with the refresh token before it expires. The
 * issuer rotates refresh tokens: each renewal spends the current one and keeps the new one, and
 * only one renewal runs at a time, since spending a token twice makes the issuer revoke the grant.
 */
import { refreshSession, revokeSession, type Session, type SignInSettings } from '../shared/sign-in.js';

/** The current access token, kept fresh. */
export interface TokenKeeper {
  /** A token valid for a while yet; renews first when the current one is close to expiring. */
  accessToken(): Promise<string>;
  /** The signed-in user's name. */
  readonly name: string | null;
  /** Called after each renewal (to reconnect what was authenticated with the old token). */
  onRenewed(listener: () => void): void;
  /**
   * Signing out: forgets the tokens (later calls of {@link TokenKeeper.accessToken} fail) and
   * revokes the refresh token at the issuer, after any renewal under way has settled so that the
   * newest one is revoked. Resolves once the issuer confirmed; rejects when it could not be
   * reached, by which time the tokens are forgotten anyway.
   */
  signOut(): Promise<void>;
  dispose(): void;
}

/** Options of {@link createTokenKeeper}. */
export interface TokenKeeperOptions {
  readonly settings: SignInSettings;
  readonly session: Session;
  /** The session could not be renewed (refresh token expired or revoked): sign in again. */
  readonly onLost: (error: Error) => void;
}

/** Renew once two thirds of the token's lifetime have passed: early enough to retry, late enough to be rare. */
const renewAt = (session: Session) => session.issuedAt + ((session.expiresAt - session.issuedAt) * 2) / 3;

/** Starts keeping `session` fresh. */
export function createTokenKeeper(options: TokenKeeperOptions): TokenKeeper {
  let session = options.session;
  let signedOut = false;
  let renewing: Promise<Session> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const listeners: Array<() => void> = [];

  const renew = (): Promise<Session> => {
    renewing ??= refreshSession(options.settings, session)
      .then((next) => {
        session = next;
        schedule();
        for (const listener of listeners) listener();
        return next;
      })
      .catch((error: unknown) => {
        const lost = error instanceof Error ? error : new Error(String(error));
        // After signing out a failed renewal is no news: the user already left.
        if (!signedOut) options.onLost(lost);
        throw lost;
      })
      .finally(() => (renewing = undefined));
    return renewing;
  };

  const schedule = () => {
    clearTimeout(timer);
    if (signedOut || session.refreshToken === null) return;
    timer = setTimeout(() => void renew().catch(() => undefined), Math.max(0, renewAt(session) - Date.now()));
  };
  schedule();

  return {
    name: session.name,
    async accessToken() {
      if (signedOut) throw new Error('signed out');
      if (renewing !== undefined) return (await renewing).accessToken;
      if (Date.now() >= renewAt(session) && session.refreshToken !== null) return (await renew()).accessToken;
      return session.accessToken;
    },
    onRenewed: (listener) => void listeners.push(listener),
    async signOut() {
      signedOut = true;
      clearTimeout(timer);
      // A renewal under way spends the current refresh token: the one to revoke is the one it brings.
      const last = renewing === undefined ? session : await renewing.catch(() => session);
      // Nothing of the session is kept past this point; the revocation gets its own copy.
      session = { ...session, accessToken: '', refreshToken: null };
      await revokeSession(options.settings, last);
    },
    dispose: () => clearTimeout(timer),
  };
}
