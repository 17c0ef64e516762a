/**
 * The subscribing side of the idle-memory workers (bench/workers/idle-sockets.ts and
 * bench/workers/followed-tests.ts): graphql-ws clients as a dashboard opens them, and one socket's
 * `testMessages` subscriptions, known to be taken once the server answers a query sent after them
 * (it handles a socket's messages in order).
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }';

/** `count` eager graphql-ws clients of the service at `url` (its HTTP address), with `token`. */
export function serviceClients(url: string, token: string, count: number): Client[] {
  const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
  return Array.from({ length: count }, () =>
    createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false }),
  );
}

/**
 * Subscribes `client` to each of `ids`; resolves once the server took them all. A subscription
 * that completes is an error when `heldToTheEnd` (a followed test must stay followed while it is
 * measured); otherwise it is ignored.
 */
export function follow(client: Client, ids: readonly string[], heldToTheEnd: boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    for (const id of ids)
      client.subscribe(
        { query: FOLLOW, variables: { id } },
        { next: () => undefined, error: reject, complete: heldToTheEnd ? () => reject(new Error(`the subscription to ${id} ended`)) : () => undefined },
      );
    client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve });
  });
}

/** Runs `each` over `items` in slices of `size`, so that handshakes and subscriptions do not all land at once. */
export async function inSlices<T>(items: readonly T[], size: number, each: (item: T, index: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map((item, j) => each(item, i + j)));
}
