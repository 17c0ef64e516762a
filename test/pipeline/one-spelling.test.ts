/**
 * One spelling per id: a UUID names one test in either case, at every door. Another client's id
 * upper-cased is not a new test (REST `Idempotency-Key`, `startTest(correlationId:)`), and reads
 * (`test`, `tests`, `testMessages`, `GET /tests/{id}`, cursors) find the test whichever case they
 * spell its id in. On the memory and the Redis store. (Result records: test/unit/ingest.)
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryBrokerSide } from '../support/memory-broker-side.js';
import { incoming } from '../log/storage-contract.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const redis = useRedisLogs('one-spelling');

const START = 'mutation($id: ID) { startTest(input: { name: "n" }, correlationId: $id) { correlationId } }';
const post = (url: string, key: string, token?: string) =>
  authedFetch(`${url}/tests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: '{"name":"n"}',
    ...(token === undefined ? {} : { token }),
  });

/**
 * The sequence of the first message `testMessages(correlationId: $id, after: $c)` pushes over
 * graphql-ws, with `token` (the default token else), once `then` (a delivery, say) has run.
 */
async function firstFollowed(url: string, variables: { id: string; c: unknown }, options: { token?: string; then?: () => Promise<unknown> } = {}) {
  const { token, then } = options;
  const ws = createWsClient(url, token === undefined ? {} : { connectionParams: { authorization: `Bearer ${token}` } });
  try {
    const run = collect<{ testMessages: { sequence: number } }>(
      ws,
      'subscription($id: ID!, $c: String) { testMessages(correlationId: $id, after: $c) { sequence } }',
      variables,
    );
    await then?.();
    await run.waitFor(1);
    expect(run.results[0]?.errors).toBeUndefined();
    run.unsubscribe();
    return run.results.map((r) => r.data?.testMessages.sequence);
  } finally {
    await ws.dispose();
  }
}

describe.each(['memory', 'redis'] as const)('one spelling per id (%s store)', (store) => {
  let svc: TestService;
  let broker: MemoryBrokerSide;
  beforeAll(async () => {
    svc = await startPipelineService(store === 'redis' ? { log: redis.createLog() } : {});
    broker = svc.memoryBroker as MemoryBrokerSide;
  }, 60_000);
  afterAll(() => svc?.stop());

  it('REST: another client cannot claim a test by upper-casing its Idempotency-Key, and its owner retries in either case', async () => {
    const id = randomUUID();
    const first = await post(svc.url, id);
    expect(first.status).toBe(202);
    const other = await post(svc.url, id.toUpperCase(), await mintToken({ sub: 'someone-else' }));
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ code: 'BAD_USER_INPUT' });
    const retry = await post(svc.url, id.toUpperCase());
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ correlationId: id });
    expect(retry.headers.get('location')).toBe(`/tests/${id}`);
    expect(await svc.log.get(id.toUpperCase())).toBeNull();
    expect(broker.published.filter((r) => r.correlationId.toLowerCase() === id).map((r) => r.correlationId)).toEqual([id, id]);
  });

  it('GraphQL: startTest(correlationId:) upper-cased starts the test under its lower-case id, which every read finds in either case', async () => {
    const id = randomUUID();
    const upper = id.toUpperCase();
    const started = await postGraphQL(svc.url, START, { id: upper });
    expect(started.body.data?.startTest).toEqual({ correlationId: id });
    const other = await postGraphQL(svc.url, START, { id }, { token: await mintToken({ sub: 'someone-else' }) });
    expect(other.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await broker.deliver([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]);

    const read = await postGraphQL(
      svc.url,
      'query($a: ID!, $b: ID!) { a: test(correlationId: $a) { correlationId } tests(correlationIds: [$a, $b]) { correlationId } }',
      { a: upper, b: id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data).toEqual({ a: { correlationId: id }, tests: [{ correlationId: id }, { correlationId: id }] });

    const page = await postGraphQL(svc.url, 'query($a: ID!) { test(correlationId: $a) { messages(first: 1) { edges { cursor } } } }', { a: id });
    const cursor = page.body.data?.test.messages.edges[0].cursor as string;
    const after = await postGraphQL(
      svc.url,
      'query($a: ID!, $c: String) { test(correlationId: $a) { messages(first: 5, after: $c) { edges { node { sequence } } } } }',
      { a: upper, c: cursor },
    );
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data?.test.messages.edges).toEqual([{ node: { sequence: 2 } }]);

    const rest = await authedFetch(`${svc.url}/tests/${upper}`);
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ correlationId: id });
  });

  it('an id that only starts like an upper-case UUID keeps its case, and its own cursors page it (GraphQL, REST, testMessages)', async () => {
    const id = `${randomUUID().toUpperCase()}-run2`;
    const admin = await mintToken({ sub: 'root', scope: 'tests:read tests:write tests:admin' });
    await broker.deliver([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]);
    const PAGE = 'query($a: ID!, $c: String) { test(correlationId: $a) { messages(first: 1, after: $c) { edges { cursor node { sequence } } } } }';
    const first = await postGraphQL(svc.url, PAGE, { a: id, c: null }, { token: admin });
    expect(first.body.data?.test.messages.edges).toMatchObject([{ node: { sequence: 1 } }]);
    const second = await postGraphQL(svc.url, PAGE, { a: id, c: first.body.data?.test.messages.edges[0].cursor }, { token: admin });
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data?.test.messages.edges).toMatchObject([{ node: { sequence: 2 } }]);
    // Its lower-case spelling is another id: no such test.
    expect((await postGraphQL(svc.url, PAGE, { a: id.toLowerCase(), c: null }, { token: admin })).body.data?.test).toBeNull();

    const rest = await authedFetch(`${svc.url}/tests/${encodeURIComponent(id)}?first=1`, { token: admin });
    const next = ((await rest.json()) as { links: { next?: string } }).links.next;
    expect(next).toBeDefined();
    const following = await authedFetch(`${svc.url}${next}`, { token: admin });
    expect(following.status).toBe(200);
    expect(((await following.json()) as { messages: Array<{ sequence: number }> }).messages.map((m) => m.sequence)).toEqual([2]);

    expect(await firstFollowed(svc.url, { id, c: first.body.data?.test.messages.edges[0].cursor }, { token: admin })).toEqual([2]);
  });

  it("REST: a message id in the next link is read in either case of its test's UUID", async () => {
    const id = randomUUID();
    await postGraphQL(svc.url, START, { id });
    await broker.deliver([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2 })]);
    const next = ((await (await authedFetch(`${svc.url}/tests/${id}?first=1`)).json()) as { links: { next: string } }).links.next;
    const upper = next.replace(encodeURIComponent(`${id}/`), encodeURIComponent(`${id.toUpperCase()}/`));
    expect(upper).not.toBe(next);
    const following = await authedFetch(`${svc.url}${upper}`);
    expect(following.status).toBe(200);
    expect(((await following.json()) as { messages: Array<{ sequence: number }> }).messages.map((m) => m.sequence)).toEqual([2]);
  });

  it('testMessages(correlationId:) upper-cased follows the test, from a cursor too', async () => {
    const id = randomUUID();
    await postGraphQL(svc.url, START, { id });
    await broker.deliver([incoming(id, { sequence: 1 })]);
    const page = await postGraphQL(svc.url, 'query($a: ID!) { test(correlationId: $a) { messages(first: 1) { edges { cursor } } } }', { a: id });
    const cursor = page.body.data?.test.messages.edges[0].cursor as string;
    const then = () => broker.deliver([incoming(id, { sequence: 2 })]);
    expect(await firstFollowed(svc.url, { id: id.toUpperCase(), c: cursor }, { then })).toEqual([2]);
  });
});
