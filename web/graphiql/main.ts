/**
 * GraphiQL for the Result Collection Service, served by the service itself: queries and mutations
 * over HTTP, subscriptions over graphql-ws, and a sign-in that fills the Authorization header.
 */
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './page.css';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { finishSignIn, startSignIn, type Session, type SignInSettings } from '../shared/sign-in.js';

/** What `/graphiql/config.json` says. */
interface PageSettings {
  readonly signIn: SignInSettings | null;
}

const EXAMPLE = `# Start a test, then follow it live: run "Start", copy the correlationId into the
# variables, then run "Follow" (a subscription over graphql-ws).

mutation Start {
  startTest(input: { name: "from GraphiQL", parameters: { steps: 5 } }) {
    correlationId
    test { status }
  }
}

subscription Follow($id: ID!) {
  testMessages(correlationId: $id) {
    sequence
    status
    final
    payload
  }
}

query Read($id: ID!) {
  test(correlationId: $id) {
    status
    messageCount
    messages { nodes { sequence payload } }
  }
}
`;

/**
 * Tabs, queries and headers live for the page's lifetime only: a token in the Headers tab must
 * never reach localStorage.
 */
function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  };
}

function Header(props: { settings: PageSettings; session: Session | null; problem: string | null }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState(props.problem);
  const { signIn } = props.settings;
  const signInButton =
    signIn === null
      ? h('span', { className: 'rcs-hint' }, 'Paste an access token in the Headers tab: { "Authorization": "Bearer …" }')
      : h(
          'button',
          {
            type: 'button',
            className: 'rcs-sign-in',
            disabled: busy,
            onClick: () => {
              setBusy(true);
              startSignIn(signIn).catch((error: unknown) => {
                setBusy(false);
                setProblem(error instanceof Error ? error.message : String(error));
              });
            },
          },
          props.session === null ? 'Sign in' : 'Sign in again',
        );
  return h(
    'header',
    { className: 'rcs-header' },
    h('strong', null, 'Result Collection Service'),
    props.session === null ? null : h('span', { className: 'rcs-user', 'data-testid': 'signed-in' }, `Signed in as ${props.session.name ?? 'you'}`),
    problem === null ? null : h('span', { className: 'rcs-problem', role: 'alert' }, problem),
    signInButton,
  );
}

function App(props: { settings: PageSettings; session: Session | null; problem: string | null }) {
  const [fetcher] = useState(() => {
    // The signed-in token is also the default under the Headers tab: GraphiQL fetches the schema
    // as soon as it mounts, possibly before its Headers editor exists.
    const signedIn = props.session === null ? undefined : { Authorization: `Bearer ${props.session.accessToken}` };
    return createGraphiQLFetcher({
      url: '/graphql',
      ...(signedIn ? { headers: signedIn, wsConnectionParams: signedIn } : {}),
      // Subscriptions get the Headers tab as the connection_init payload, so the same
      // Authorization header authenticates both transports.
      subscriptionUrl: `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql`,
      enableIncrementalDelivery: false,
    });
  });
  const headers = props.session === null ? '{}' : JSON.stringify({ Authorization: `Bearer ${props.session.accessToken}` }, null, 2);
  return h(
    'div',
    { className: 'rcs-page' },
    h(Header, props),
    h(
      'main',
      { className: 'rcs-ide' },
      h(GraphiQL, {
        fetcher,
        storage: memoryStorage(),
        initialQuery: EXAMPLE,
        initialHeaders: headers,
        defaultHeaders: headers,
        shouldPersistHeaders: false,
        isHeadersEditorEnabled: true,
        defaultEditorToolsVisibility: props.session === null ? 'headers' : false,
      }),
    ),
  );
}

async function start(): Promise<void> {
  const root = createRoot(document.getElementById('root') as HTMLElement);
  const settings = (await (await fetch('/graphiql/config.json')).json()) as PageSettings;
  let session: Session | null = null;
  let problem: string | null = null;
  // `/graphql?sign-in`: a link that goes straight to the login page (the local stack prints it).
  const signInAsked = new URLSearchParams(window.location.search).has('sign-in');
  if (signInAsked) window.history.replaceState(null, '', window.location.pathname);
  if (settings.signIn !== null) {
    try {
      session = await finishSignIn(settings.signIn);
      if (session === null && signInAsked) {
        await startSignIn(settings.signIn);
        return;
      }
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
  } else if (signInAsked) {
    problem = 'Sign-in is not set up here (GRAPHQL_IDE_CLIENT_ID); paste a token in the Headers tab.';
  }
  root.render(h(App, { settings, session, problem }));
}

void start();
