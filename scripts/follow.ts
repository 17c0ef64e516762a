/**
 * Follows one test with the client library (packages/client) and prints each message as a JSON line.
 * Usage: TOKEN=… npx tsx scripts/follow.ts URL CORRELATION_ID [--sse]   (or `--start` to start a test first)
 * Exits 0 once the test's final message arrived, 1 when the test is unknown or following fails.
 */
import { follow } from '../packages/client/src/index.js';

const [url = 'http://localhost:4000', idArg] = process.argv.slice(2).filter((arg) => arg !== '--sse');
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

// The client library resumes after the last message printed whenever the connection is lost
// (a restart of the stack, a network blip), and stops for good, saying why, on what it cannot resume.
const following = follow(id, {
  url,
  transport: process.argv.includes('--sse') ? 'sse' : 'ws',
  getToken: () => token,
  onMessage: (message) => void process.stdout.write(`${JSON.stringify(message)}\n`),
  onState: (state) => {
    if (state.status === 'reconnecting') process.stderr.write(`reconnecting in ${state.waitMs} ms (${state.reason})\n`);
  },
});
const end = await following.done;
if (end.status !== 'completed') {
  process.stderr.write(`${end.status === 'failed' ? `${end.code}: ${end.message}` : end.status}\n`);
  process.exit(1);
}
process.stderr.write('test finished\n');
