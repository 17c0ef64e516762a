/**
 * Follows `tests` seeded tests (bench/lib/seed.ts's ids), one `testMessages` subscription each,
 * `perSocket` of them on each WebSocket, then stays idle until SIGTERM. Prints `{ open, sockets }`
 * once every subscription has been taken.
 * Usage: followed-tests.ts <url> <token> <tests> <perSocket> [first]
 * `first`: the index of the first seeded test followed (the warm-up follows others than the measured run).
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { seedIds } from '../lib/seed.js';

const [url = '', token = '', testsArg = '1', perSocketArg = '1', firstArg = '0'] = process.argv.slice(2);
const ids = seedIds(Number(firstArg) + Number(testsArg)).slice(Number(firstArg));
const perSocket = Number(perSocketArg);
const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
const socketCount = Math.ceil(ids.length / perSocket);
const clients = Array.from({ length: socketCount }, () =>
  createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false }),
);

/** Subscribes one socket to its tests; resolves once the server answered a query sent after them (it took them in order). */
function follow(client: (typeof clients)[number], tests: readonly string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    for (const id of tests)
      client.subscribe(
        { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id } },
        { next: () => undefined, error: reject, complete: () => reject(new Error(`the subscription to ${id} ended`)) },
      );
    client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve });
  });
}

for (let i = 0; i < socketCount; i += 50) {
  // In slices, so the handshakes and subscriptions do not all land at once.
  await Promise.all(clients.slice(i, i + 50).map((client, j) => follow(client, ids.slice((i + j) * perSocket, (i + j + 1) * perSocket))));
}
process.once('SIGTERM', () => process.exit(0));
console.log(JSON.stringify({ open: ids.length, sockets: socketCount }));
setInterval(() => undefined, 60_000);
