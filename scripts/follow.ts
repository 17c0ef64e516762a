/**
 * Follows one test over the WebSocket subscription and prints each message as a JSON line.
 * Usage: TOKEN=… npx tsx scripts/follow.ts URL CORRELATION_ID   (or `--start` to start a test first)
 * Exits 0 once the test's final message arrived, 1 when the test is unknown or following fails.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = 'http://localhost:4000', idArg] = process.argv.slice(2);
const token = process.env.TOKEN;
if (!token) {
  process.stderr.write('Set TOKEN to an access token (see "What to try first" in README.md).\n');
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
// Null when the test finished; otherwise why following it failed (an unknown test comes back as a
// result with errors and then completes, so `next` must look for errors too).
const failure = await new Promise<string | null>((resolve) => {
  client.subscribe(
    { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence status final payload receivedAt } }', variables: { id } },
    {
      next: (value) => {
        if (value.errors !== undefined && value.errors.length > 0) {
          resolve(value.errors.map((e) => `${String(e.extensions?.code ?? 'ERROR')}: ${e.message}`).join('\n'));
          return;
        }
        process.stdout.write(`${JSON.stringify(value.data?.testMessages ?? value)}\n`);
      },
      error: (error: unknown) => resolve(describe(error)),
      complete: () => resolve(null),
    },
  );
});
await client.dispose();
if (failure !== null) {
  process.stderr.write(`${failure}\n`);
  process.exit(1);
}
process.stderr.write('test finished\n');

/** A graphql-ws failure: GraphQL errors, a close event (code and reason), or an Error. */
function describe(error: unknown): string {
  if (Array.isArray(error)) return error.map((e: { message?: string }) => e.message ?? String(e)).join('\n');
  const close = error as { code?: unknown; reason?: unknown };
  if (typeof close.code === 'number')
    return `the connection closed (${close.code}${typeof close.reason === 'string' && close.reason !== '' ? `: ${close.reason}` : ''})`;
  return error instanceof Error ? error.message : String(error);
}
