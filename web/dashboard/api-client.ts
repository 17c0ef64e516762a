/**
 * The dashboard's GraphQL client: urql, with queries and mutations over HTTP (`POST /graphql`)
 * and subscriptions over one graphql-ws socket to the same origin. Both carry the access token
 * the {@link TokenKeeper} holds: HTTP in the Authorization header, the socket in its
 * `connection_init` payload, which is where the service reads it.
 *
 * The service closes a socket when its token expires, so after each renewal the socket is
 * dropped and reopened with the new token, and graphql-ws sends the list's `testChanges` again.
 * Changes made while no socket was open are caught by the `onReconnected` callback, after which
 * the list reads its query again. (A test's messages are followed by the client library instead,
 * which resumes by cursor: use-follow.ts.)
 */
import { Client, fetchExchange, subscriptionExchange, type ExecutionResult } from '@urql/core';
import { createClient as createWsClient } from 'graphql-ws/client';
import type { TokenKeeper } from './token-keeper.js';

/** The client and its socket. */
export interface ApiClient {
  readonly client: Client;
  dispose(): void;
}

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  readonly tokens: TokenKeeper;
  /** The socket opened again after it was lost or replaced: what was missed must be read again. */
  readonly onReconnected: () => void;
}

/** First retry at once (a renewal), then backing off to 10 s with some jitter (a lost server). */
const retryWait = (retries: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, retries === 0 ? 100 : Math.min(10_000, 500 * 2 ** retries) + Math.random() * 500));

/** An Error for what graphql-ws reports: GraphQL errors as they are, a close event by its code and reason. */
function describeFailure(error: unknown): unknown {
  if (error !== null && typeof error === 'object' && 'code' in error && 'reason' in error) {
    const { code, reason } = error as { code: number; reason: string };
    return new Error(`the live connection closed (${code}${reason ? ` ${reason}` : ''})`);
  }
  return error;
}

/** Creates the client for the page's own origin. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const { tokens } = options;
  const ws = createWsClient({
    url: `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql`,
    // Asked for at every connection, so a reconnect presents the newest token.
    connectionParams: async () => ({ authorization: `Bearer ${await tokens.accessToken()}` }),
    retryAttempts: 20,
    retryWait,
    // Every close is worth a retry: 4403 is what an expired token gets, and the next attempt has a renewed one.
    shouldRetry: () => true,
    on: {
      connected: (_socket, _payload, wasRetry) => {
        if (wasRetry) options.onReconnected();
      },
    },
  });
  tokens.onRenewed(() => ws.terminate());

  const client = new Client({
    url: '/graphql',
    // No document cache: the list and the detail merge live events into what they read, and
    // always read from the service.
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: ws.subscribe(
              { ...request, query: request.query ?? '' },
              // A socket closed for good reaches here as a CloseEvent: say which close it was.
              { next: (value) => sink.next(value as ExecutionResult), complete: () => sink.complete(), error: (error) => sink.error(describeFailure(error)) },
            ),
          }),
        }),
      }),
    ],
    requestPolicy: 'network-only',
    // POST for queries too: a GET without a custom header is what the service's CSRF check refuses.
    preferGetMethod: false,
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${await tokens.accessToken()}`);
      return fetch(input, { ...init, headers });
    },
  });

  return { client, dispose: () => void ws.dispose() };
}
