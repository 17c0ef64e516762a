/**
 * A reader cannot grow the heap without bound: hundreds of requests, each carrying ~900 kB of
 * variables the operation does not declare (graphql-js ignores them) or a ~900 kB comment in its
 * document (which the token limit does not count), over HTTP, graphql-ws and SSE, leave the heap
 * within a bound set by the caches' byte budgets, whatever was sent. The service runs in this
 * process, so the heap measured is its own.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { collect, createSseClient, createWsClient, postGraphQL } from '../support/graphql.js';
import { defaultToken } from '../support/tokens.js';

/** Requests per transport and per kind of padding. */
const REQUESTS = 120;
const PAD = 900 * 1024;
/**
 * What the heap may keep after them: the two document caches (16 MiB each by default), the response
 * cache's share, and room for what the runtime itself holds on to.
 */
const HEAP_BOUND = 96 * 1024 * 1024;

let svc: TestService;
let token: string;
beforeAll(async () => {
  // Messages up to 1 MiB over graphql-ws (64 KiB by default), so the WebSocket carries the same padding.
  svc = await startPipelineService({ env: { RATE_LIMITS: 'off', WS_MAX_MESSAGE_BYTES: String(1024 * 1024) } });
  token = await defaultToken();
}, 60_000);
afterAll(() => svc?.stop());

const QUERY = 'query($id: ID!) { test(correlationId: $id) { correlationId status } }';
/** ~900 kB of fresh variables the operation does not declare. */
const undeclared = () => ({ id: 'absent', padding: randomBytes(PAD / 2).toString('hex') });
/** The query with a fresh ~900 kB comment: a new document text each time. */
const commented = () => `# ${randomBytes(PAD / 2).toString('hex')}\n${QUERY}`;

const heapUsed = () => {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage().heapUsed;
};
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function overHttp(): Promise<void> {
  for (let i = 0; i < REQUESTS; i++) {
    const padded = await postGraphQL(svc.url, QUERY, undeclared(), { token });
    expect(padded.body.errors).toBeUndefined();
    const comment = await postGraphQL(svc.url, commented(), { id: 'absent' }, { token });
    expect(comment.body.errors).toBeUndefined();
  }
}

async function overStream(client: ReturnType<typeof createWsClient> | ReturnType<typeof createSseClient>): Promise<void> {
  for (let i = 0; i < REQUESTS; i++) {
    for (const request of [
      { query: QUERY, variables: undeclared() },
      { query: commented(), variables: { id: 'absent' } },
    ]) {
      const run = collect(client, request.query, request.variables);
      await run.done;
      expect(run.results[0]?.errors).toBeUndefined();
    }
  }
}

describe('hostile reads', () => {
  it(`keep the heap within ${mb(HEAP_BOUND)} over HTTP, graphql-ws and SSE`, async () => {
    const before = heapUsed();
    await overHttp();
    const afterHttp = heapUsed();
    const ws = createWsClient(svc.url);
    await overStream(ws);
    await ws.dispose();
    const afterWs = heapUsed();
    const sse = createSseClient(svc.url);
    await overStream(sse);
    sse.dispose();
    const afterSse = heapUsed();
    const sent = 3 * REQUESTS * 2 * PAD;
    console.log(`hostile reads: ${mb(sent)} sent; heap ${mb(before)} → ${mb(afterHttp)} (HTTP) → ${mb(afterWs)} (graphql-ws) → ${mb(afterSse)} (SSE)`);
    expect(afterSse - before).toBeLessThan(HEAP_BOUND);
  }, 300_000);
});
