/**
 * One limit on a test's input, whichever way it is started: the `startTest` mutation over HTTP,
 * graphql-ws and SSE, and `POST /tests`, each refuse an input over `TEST_INPUT_MAX_BYTES` with
 * INPUT_TOO_LARGE (413 over HTTP) and start nothing; an input at the limit starts; a REST body no
 * input could fit in is PAYLOAD_TOO_LARGE. In the replicated mode, a start request over the limit
 * read from the requests topic is not recorded. The service runs without a broker (the pipeline's
 * harness): start requests land in its memory broker side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { inputBytes } from '../../src/results/input-size.js';
import { createStartRecorder } from '../../src/results/record-start.js';
import { postGraphQL, sseErrors, wsErrors } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

const LIMIT = 4096;
const START = `mutation($input: StartTestInput) { startTest(input: $input) { correlationId } }`;
/** An input whose JSON is exactly `bytes` long. */
const inputOf = (bytes: number) => {
  const base = inputBytes({ name: 'limit', parameters: { blob: '' } });
  return { name: 'limit', parameters: { blob: 'x'.repeat(bytes - base) } };
};

let svc: TestService;
let token: string;
beforeAll(async () => {
  svc = await startPipelineService({ env: { TEST_INPUT_MAX_BYTES: String(LIMIT) } });
  await svc.ready();
  token = await defaultToken();
}, 60_000);
afterAll(() => svc?.stop());

const postTests = (body: string) =>
  fetch(`${svc.url}/tests`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
const testsStarted = () => svc.log.list({ first: 100 }).then((page) => page.totalCount);

describe('the input limit', () => {
  it('starts a test whose input is exactly at the limit, over GraphQL and REST', async () => {
    expect(inputBytes(inputOf(LIMIT))).toBe(LIMIT);
    const graphql = await postGraphQL(svc.url, START, { input: inputOf(LIMIT) }, { token });
    expect(graphql.body.errors).toBeUndefined();
    const rest = await postTests(JSON.stringify(inputOf(LIMIT)));
    expect(rest.status).toBe(202);
  });

  it('refuses an input over the limit with INPUT_TOO_LARGE on HTTP, graphql-ws and SSE, and starts nothing', async () => {
    const before = await testsStarted();
    const over = { input: inputOf(LIMIT + 1) };
    const http = await postGraphQL(svc.url, START, over, { token });
    expect(http.body.errors?.[0]?.extensions?.code).toBe('INPUT_TOO_LARGE');
    expect(http.body.errors?.[0]?.extensions?.maxBytes).toBe(LIMIT);
    // What the 1 MB body admits, far over the limit.
    const huge = await postGraphQL(svc.url, START, { input: inputOf(900 * 1024) }, { token });
    expect(huge.body.errors?.[0]?.extensions?.code).toBe('INPUT_TOO_LARGE');
    expect((await wsErrors(svc.url, START, over))[0]?.extensions?.code).toBe('INPUT_TOO_LARGE');
    expect((await sseErrors(svc.url, START, over))[0]?.extensions?.code).toBe('INPUT_TOO_LARGE');
    expect(await testsStarted()).toBe(before);
  });

  it('refuses the same over POST /tests with 413 INPUT_TOO_LARGE, and a body no input fits in with PAYLOAD_TOO_LARGE', async () => {
    const before = await testsStarted();
    const over = await postTests(JSON.stringify(inputOf(LIMIT + 1)));
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ code: 'INPUT_TOO_LARGE', maxBytes: LIMIT });
    const body = await postTests(JSON.stringify(inputOf(3 * LIMIT)));
    expect(body.status).toBe(413);
    expect(await body.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(await testsStarted()).toBe(before);
  });

  it('does not record a start request over the limit read back in the replicated mode', async () => {
    const log = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: 10 });
    const record = createStartRecorder({ log, maxInputBytes: LIMIT, logger: createSilentLogger() });
    await record([
      { correlationId: 'fits', input: inputOf(LIMIT), owner: 'alice', requestedAt: 1 },
      { correlationId: 'over', input: inputOf(LIMIT + 1), owner: 'alice', requestedAt: 2 },
    ]);
    expect((await log.getMany(['fits', 'over'])).map((test) => test?.correlationId ?? null)).toEqual(['fits', null]);
    await log.dispose();
  });
});
