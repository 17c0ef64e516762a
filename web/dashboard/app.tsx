/**
 * The dashboard's layout: the start form and the user's tests on the left, the open test on the
 * right. Which test is open lives in the address (`#/tests/<id>`), so a reload keeps it open.
 */
import { useEffect, useState } from 'react';
import { StartForm } from './start-form.js';
import { TestDetail } from './test-detail.js';
import { TestList } from './test-list.js';

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

function Header(props: { userName?: string | null; onSignIn?: () => void }) {
  return (
    <header className="rcs-header">
      <strong>Result Collection Service · Dashboard</strong>
      {props.userName !== undefined ? <span data-testid="signed-in">Signed in as {props.userName ?? 'you'}</span> : null}
      {props.onSignIn ? (
        <button type="button" onClick={props.onSignIn}>
          Sign in
        </button>
      ) : null}
    </header>
  );
}

/** The page before signing in (or after the session ended). */
export function SignedOut(props: { problem: string | null; onSignIn?: () => void }) {
  return (
    <div className="rcs-page">
      <Header {...(props.onSignIn ? { onSignIn: props.onSignIn } : {})} />
      <main className="rcs-signed-out">
        {props.problem ? <p role="alert">{props.problem}</p> : <p>Sign in to start tests and follow their results live.</p>}
      </main>
    </div>
  );
}

/**
 * The signed-in page. `reconnects` counts the times the live connection came back: the list
 * reads its query again on each, for what changed while it was away.
 */
export function App(props: { userName: string | null; reconnects: number }) {
  const [openTest, setOpenTest] = useOpenTest();
  return (
    <div className="rcs-page">
      <Header userName={props.userName} />
      <div className="rcs-columns">
        <aside>
          <StartForm onStarted={setOpenTest} />
          <TestList reconnects={props.reconnects} openTest={openTest} onOpen={setOpenTest} />
        </aside>
        <main>{openTest === null ? <p className="rcs-hint">Start a test or pick one from the list to watch its messages arrive.</p> : <TestDetail key={openTest} correlationId={openTest} />}</main>
      </div>
    </div>
  );
}
