/**
 * A start the caller can retry: `startTest(correlationId:)` and `POST /tests` with
 * `Idempotency-Key` take the caller's UUID as the test's correlation id. A start whose answer was
 * lost (BROKER_UNAVAILABLE while the request went out anyway, which the chaos run found 58 times in
 * an hour of broker faults) is retried with the same id and answered with the same test, its
 * request sent again under the same id, never a second test; an id reused with another input, or
 * by another caller, is refused. The service runs without a broker (its broker side fails a publish
 * on demand), on the memory store and on Redis.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryBrokerSide } from '../support/memory-broker-side.js';
import { incoming } from '../log/storage-contract.js';
import { postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const redis = useRedisLogs('retry-safe-start');
let svc: TestService;
let broker: MemoryBrokerSide;

const START = 'mutation($id: ID, $name: String) { startTest(input: { name: $name }, correlationId: $id) { correlationId test { status input } } }';
const start = (id: string | undefined, name = 'run', token?: string) => postGraphQL(svc.url, START, { id, name }, token === undefined ? {} : { token });
const requestsFor = (id: string) => broker.published.filter((request) => request.correlationId === id);

// On each store: a Redis log gives inputs back from their JSON, which the comparison of a retry's input must allow for.
describe.each(['memory', 'redis'] as const)('a retry-safe start (%s store)', (store) => {
  beforeAll(async () => {
    svc = await startPipelineService(store === 'redis' ? { log: redis.createLog() } : {});
    broker = svc.memoryBroker as MemoryBrokerSide;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers the same test when retried after an answer that was lost, sending its request again, and stores its results once', async () => {
    const id = randomUUID();
    broker.failNext('unconfirmed');
    const lost = await start(id);
    expect(lost.body.errors?.[0]?.extensions?.code).toBe('BROKER_UNAVAILABLE');
    // The request went out; the test is kept for the retry rather than taken back.
    expect(requestsFor(id)).toHaveLength(1);
    expect(await svc.log.get(id)).not.toBeNull();
    const retried = await start(id);
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data?.startTest).toEqual({ correlationId: id, test: { status: 'PENDING', input: { name: 'run' } } });
    expect(requestsFor(id)).toHaveLength(2);
    expect(requestsFor(id).map((r) => r.owner)).toEqual(['tester', 'tester']);
    // The external system answers each request it got: the same results twice, stored once.
    const results = [incoming(id, { sequence: 1 }), incoming(id, { sequence: 2, final: true })];
    await broker.deliver(results);
    await broker.deliver(results);
    expect((await svc.log.get(id))?.messages.map((m) => m.sequence)).toEqual([1, 2]);
    const again = await start(id);
    expect(again.body.data?.startTest.correlationId).toBe(id);
  });

  it('after a refused send too: the retry records and sends the test once the broker takes it', async () => {
    const id = randomUUID();
    broker.failNext('refused');
    expect((await start(id)).body.errors?.[0]?.extensions?.code).toBe('BROKER_UNAVAILABLE');
    expect(requestsFor(id)).toHaveLength(0);
    expect((await start(id)).body.data?.startTest.correlationId).toBe(id);
    expect(requestsFor(id)).toHaveLength(1);
  });

  it('refuses an id that is not a UUID, one reused with another input, and one another caller holds, naming the argument', async () => {
    const notUuid = await start('my-test-1');
    expect(notUuid.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'correlationId' });
    const id = randomUUID();
    expect((await start(id, 'first')).body.data?.startTest.correlationId).toBe(id);
    const otherInput = await start(id, 'second');
    expect(otherInput.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'correlationId' });
    const stranger = await start(id, 'first', await mintToken({ sub: 'someone-else' }));
    expect(stranger.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'correlationId' });
    expect(stranger.body.errors?.[0]?.message).toBe('This correlationId is taken: choose another.');
    // Neither refusal sent anything or changed the test.
    expect(requestsFor(id)).toHaveLength(1);
    expect((await svc.log.get(id))?.input).toEqual({ name: 'first' });
  });

  it('does not claim a test seen only through its results', async () => {
    const id = randomUUID();
    await broker.deliver([incoming(id, { sequence: 1 })]);
    const claimed = await start(id);
    expect(claimed.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'correlationId' });
    expect((await svc.log.get(id))?.owner).toBeNull();
  });

  it('over REST: POST /tests with Idempotency-Key answers 202 with that id, again on a retry, and 400 for a key that is not a UUID', async () => {
    const id = randomUUID();
    const post = (key: string) =>
      authedFetch(`${svc.url}/tests`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: '{"name":"rest"}' });
    broker.failNext('unconfirmed');
    const lost = await post(id);
    expect(lost.status).toBe(503);
    for (let i = 0; i < 2; i++) {
      const answer = await post(id);
      expect(answer.status).toBe(202);
      expect(answer.headers.get('location')).toBe(`/tests/${id}`);
      expect(await answer.json()).toMatchObject({ correlationId: id });
    }
    expect(requestsFor(id)).toHaveLength(3);
    const bad = await post('not-a-uuid');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('without an id, a failed send is taken back: no test is left that was never sent', async () => {
    broker.failNext('refused');
    const before = broker.published.length;
    const refused = await postGraphQL(svc.url, 'mutation { startTest(input: { name: "x" }) { correlationId } }');
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('BROKER_UNAVAILABLE');
    expect(broker.published.length).toBe(before);
    expect((await svc.log.list({ first: 100 })).edges.some((e) => (e.node.input as { name?: string } | null)?.name === 'x')).toBe(false);
  });
});
