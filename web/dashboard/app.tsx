/**
 * The dashboard's layout: the start form and the user's tests on the left, the open test on the
 * right. Which test is open lives in the address (`#/tests/<id>`), so a reload keeps it open.
 */
import { useEffect, useState } from 'react';
import { StartForm } from './start-form.js';
import { TestDetail } from './test-detail.js';
import { TestList } from './test-list.js';
import type { TokenKeeper } from './token-keeper.js';

/** The open test's id, from `#/tests/<id>`; null when none is open. */
function useOpenTest(): [string | null, (id: string) => void] {
  const read = () => {
    const match = /^#\/tests\/(.+)$/.exec(window.location.hash);
    return match ? decodeURIComponent(match[1] as string) : null;
  };
  const [open, setOpen] = useState(read);
  useEffect(() => {
    const changed = () => setOpen(read());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return [open, (id) => (window.location.hash = `#/tests/${encodeURIComponent(id)}`)];
}

function Header(props: { userName?: string | null; onSignIn?: () => void; onSignOut?: () => void }) {
  return (
    <header className="rcs-header">
      <strong>Result Collection Service · Dashboard</strong>
      {props.userName !== undefined ? <span data-testid="signed-in">Signed in as {props.userName ?? 'you'}</span> : null}
      {props.onSignIn ? (
        <button type="button" onClick={props.onSignIn}>
          Sign in
        </button>
      ) : null}
      {props.onSignOut ? (
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      ) : null}
    </header>
  );
}

/**
 * The page before signing in, after signing out, or after the session ended. `notice` says what
 * just happened (e.g. "You signed out."), `problem` what went wrong; without either it invites
 * the user to sign in. No Sign in button while `onSignIn` is absent (signing out is still under way).
 */
export function SignedOut(props: { problem: string | null; notice?: string; onSignIn?: () => void }) {
  return (
    <div className="rcs-page">
      <Header {...(props.onSignIn ? { onSignIn: props.onSignIn } : {})} />
      <main className="rcs-signed-out" data-testid="signed-out">
        {props.notice ? <p role="status">{props.notice}</p> : null}
        {props.problem ? <p role="alert">{props.problem}</p> : null}
        {!props.notice && !props.problem ? <p>Sign in to start tests and follow their results live.</p> : null}
      </main>
    </div>
  );
}

/**
 * The signed-in page. `reconnects` counts the times the live connection came back: the list
 * reads its query again on each, for what changed while it was away. `onSignOut` is the header's
 * Sign out button.
 */
export function App(props: { userName: string | null; reconnects: number; tokens: TokenKeeper; onSignOut: () => void }) {
  const [openTest, setOpenTest] = useOpenTest();
  return (
    <div className="rcs-page">
      <Header userName={props.userName} onSignOut={props.onSignOut} />
      <div className="rcs-columns">
        <aside>
          <StartForm onStarted={setOpenTest} />
          <TestList reconnects={props.reconnects} openTest={openTest} onOpen={setOpenTest} />
        </aside>
        <main>
          {openTest === null ? (
            <p className="rcs-hint">Start a test or pick one from the list to watch its messages arrive.</p>
          ) : (
            <TestDetail key={openTest} correlationId={openTest} tokens={props.tokens} />
          )}
        </main>
      </div>
    </div>
  );
}
