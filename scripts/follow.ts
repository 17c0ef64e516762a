/**
 * Follows one test over the WebSocket subscription and prints each message as a JSON line.
 * Usage: TOKEN=… npx tsx scripts/follow.ts URL CORRELATION_ID   (or `--start` to start a test first)
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = 'http://localhost:4000', idArg] = process.argv.slice(2);
const token = process.env.TOKEN;
if (!token) {
  process.stderr.write('Set TOKEN to an access token (see the Quick start in README.md).\n');
  process.exit(2);
}
const authorization = `Bearer ${token}`;
let id = idArg;
if (id === undefined || id === '--start') {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query: 'mutation { startTest(input: { name: "follow", parameters: { steps: 5 } }) { correlationId } }' }),
  });
  const body = (await response.json()) as { data?: { startTest: { correlationId: string } }; errors?: unknown };
  if (!body.data) throw new Error(`startTest failed: ${JSON.stringify(body.errors)}`);
  id = body.data.startTest.correlationId;
  process.stderr.write(`started ${id}\n`);
}

const client = createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization } });
await new Promise<void>((resolve, reject) => {
  client.subscribe(
    { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence status final payload receivedAt } }', variables: { id } },
    { next: (value) => process.stdout.write(`${JSON.stringify(value.data?.testMessages ?? value)}\n`), error: reject, complete: resolve },
  );
});
process.stderr.write('test finished\n');
await client.dispose();
