/**
 * What the service stored, read back at the end of a chaos run: each test's message sequences,
 * through the load balancer, with the admin scope (a test whose start the client was refused, a
 * publish that timed out but landed, has no owner, and only an admin sees it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../test/support/tokens.js';

/** How long the checker waits for one read of the store. */
const READ_TIMEOUT_MS = 10_000;
/** Reads of the store the checker has in flight at once. */
const READS_AT_ONCE = 8;

/** The messages stored for a test, in the order the service lists them (pages of 100). */
async function storedSequences(url: string, id: string): Promise<number[] | undefined> {
  const authorization = `Bearer ${await mintToken({ sub: 'chaos-checker', scope: 'tests:read tests:admin' })}`;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    // A read that hangs must not hold the run: it is tried again, then the test counts as unreadable.
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query Stored($id: ID!) { test(correlationId: $id) { messages(first: 100) { edges { node { sequence } } } } }',
      variables: { id },
    }),
  });
  const body = (await response.json()) as { data?: { test: { messages: { edges: Array<{ node: { sequence: number } }> } } | null } };
  return body.data?.test?.messages.edges.map((edge) => edge.node.sequence);
}

/** {@link storedSequences} tried up to three times, a second apart; undefined when every try failed. */
async function storedSequencesRetried(url: string, id: string): Promise<number[] | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await storedSequences(url, id);
    } catch {
      if (attempt === 3) return undefined;
      await sleep(1_000);
    }
  }
}

/**
 * Reads the tests `ids` hold, {@link READS_AT_ONCE} at a time (an hour's thousands of tests, each
 * read through the load balancer). A test every try failed to read maps to undefined.
 */
export async function readStored(url: string, ids: readonly string[]): Promise<Map<string, number[] | undefined>> {
  const read = new Map<string, number[] | undefined>();
  let next = 0;
  const reader = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      read.set(id, await storedSequencesRetried(url, id));
    }
  };
  await Promise.all(Array.from({ length: READS_AT_ONCE }, reader));
  return read;
}
