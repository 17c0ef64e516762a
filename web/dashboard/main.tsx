/**
 * The live dashboard, served by the service at /dashboard/: sign in (code + PKCE), start tests,
 * watch the signed-in user's tests and one test's messages arrive live.
 *
 * On load: a page opened by the issuer's redirect finishes the sign-in; any other load (a reload,
 * a bookmark) first tries a silent one (`prompt=none`), which comes back at once with a code while
 * the issuer's sign-in session (its own httpOnly cookie) lasts, and with `login_required` when it
 * does not, when the page offers the Sign in button. The open test (`#/tests/<id>`) is kept across
 * the round trip in sessionStorage; tokens never are.
 *
 * Signing out drops the tokens from memory, closes the live connection and revokes the refresh
 * token at the issuer. The issuer's own sign-in session outlives that (its cookie is not the
 * page's to clear), so the page also remembers that the user signed out: no silent sign-in on the
 * next load, and the next Sign in asks for the password again (`prompt=login`) instead of
 * coming straight back through the open session.
 */
import './page.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider } from 'urql';
import { SignInError, finishSignIn, startSignIn, type Session, type SignInSettings } from '../shared/sign-in.js';
import { createApiClient } from './api-client.js';
import { App, SignedOut } from './app.js';
import { createTokenKeeper } from './token-keeper.js';

/** What `/dashboard/config.json` says. */
interface PageSettings {
  readonly signIn: SignInSettings | null;
}

const RETURN_TO = 'rcs.dashboard.return-to';
/**
 * Set when the user signed out, removed when they sign in again. In localStorage, not
 * sessionStorage: a tab opened later must not sign them back in silently either. It holds no token.
 */
const SIGNED_OUT = 'rcs.dashboard.signed-out';

/** Leaves for the issuer, remembering which test was open; asks for the password after a sign-out. */
function signIn(settings: SignInSettings, silent: boolean): Promise<void> {
  sessionStorage.setItem(RETURN_TO, window.location.hash);
  return startSignIn(settings, silent ? { prompt: 'none' } : localStorage.getItem(SIGNED_OUT) !== null ? { prompt: 'login' } : {});
}

/** The session this load ends with: a finished sign-in, or null with what to tell the user. */
async function establish(settings: SignInSettings): Promise<{ session: Session | null; problem: string | null; leaving: boolean }> {
  const params = new URLSearchParams(window.location.search);
  const returning = params.has('code') || params.has('error');
  if (returning) {
    const hash = sessionStorage.getItem(RETURN_TO);
    sessionStorage.removeItem(RETURN_TO);
    try {
      const session = await finishSignIn(settings);
      if (hash) window.history.replaceState(null, '', `${window.location.pathname}${hash}`);
      if (session !== null) localStorage.removeItem(SIGNED_OUT);
      return { session, problem: null, leaving: false };
    } catch (error) {
      if (hash) window.history.replaceState(null, '', `${window.location.pathname}${hash}`);
      // No open sign-in session at the issuer: the silent attempt's expected answer, not a problem.
      if (error instanceof SignInError && (error.code === 'login_required' || error.code === 'consent_required' || error.code === 'interaction_required'))
        return { session: null, problem: null, leaving: false };
      return { session: null, problem: error instanceof Error ? error.message : String(error), leaving: false };
    }
  }
  // `/dashboard/?sign-in`: straight to the login page (the local stack prints this link).
  const interactive = params.has('sign-in');
  // Signed out: stay out until the user asks to sign in.
  if (!interactive && localStorage.getItem(SIGNED_OUT) !== null) return { session: null, problem: null, leaving: false };
  await signIn(settings, !interactive);
  return { session: null, problem: null, leaving: true };
}

async function start(): Promise<void> {
  const root = createRoot(document.getElementById('root') as HTMLElement);
  const settings = (await (await fetch('/dashboard/config.json')).json()) as PageSettings;
  const { signIn: signInSettings } = settings;
  if (signInSettings === null) {
    root.render(<SignedOut problem="Sign-in is not set up here: set DASHBOARD_CLIENT_ID to a public client of the embedded issuer." />);
    return;
  }
  const { session, problem, leaving } = await establish(signInSettings);
  if (leaving) return;
  const signInButton = () => void signIn(signInSettings, false);
  if (session === null) {
    root.render(<SignedOut problem={problem} onSignIn={signInButton} />);
    return;
  }
  let reconnects = 0;
  let render = (): void => undefined;
  const tokens = createTokenKeeper({
    settings: signInSettings,
    session,
    onLost: (error) => {
      api.dispose();
      root.render(<SignedOut problem={`Your session ended (${error.message}). Sign in again.`} onSignIn={signInButton} />);
    },
  });
  const api = createApiClient({
    tokens,
    onReconnected: () => {
      reconnects += 1;
      render();
    },
  });
  const signOut = async () => {
    localStorage.setItem(SIGNED_OUT, 'true');
    // The signed-in views go first, ending their subscriptions, then the socket closes.
    root.render(<SignedOut problem={null} notice="Signing out…" />);
    api.dispose();
    const problem = await tokens.signOut().then(
      () => null,
      (error: unknown) => `Signed out on this page, but the issuer could not be told (${error instanceof Error ? error.message : String(error)}).`,
    );
    root.render(<SignedOut problem={problem} notice="You signed out." onSignIn={signInButton} />);
  };
  render = () =>
    root.render(
      <StrictMode>
        <Provider value={api.client}>
          <App userName={tokens.name} reconnects={reconnects} tokens={tokens} onSignOut={() => void signOut()} />
        </Provider>
      </StrictMode>,
    );
  render();
}

void start();
