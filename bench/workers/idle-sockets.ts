/**
 * Opens `count` WebSockets, each with one `testMessages` subscription, then stays idle until
 * SIGTERM. Prints `{ open }` once every subscription is live.
 * Usage: idle-sockets.ts <url> <token> <count> <id>
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = '', token = '', countArg = '1', id = ''] = process.argv.slice(2);
const count = Number(countArg);
const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
const clients = Array.from({ length: count }, () =>
  createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false }),
);
for (let i = 0; i < count; i += 200) {
  // In slices, so the handshakes do not all land at once.
  await Promise.all(
    clients.slice(i, i + 200).map(
      (client) =>
        new Promise<void>((resolve, reject) => {
          client.subscribe(
            { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id } },
            { next: () => undefined, error: reject, complete: () => undefined },
          );
          client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve });
        }),
    ),
  );
}
process.once('SIGTERM', () => process.exit(0));
console.log(JSON.stringify({ open: count }));
setInterval(() => undefined, 60_000);
