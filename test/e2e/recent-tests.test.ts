/**
 * The dashboard's reads: `recentTests` over HTTP and `testChanges` over graphql-ws, with real
 * tokens of two subjects and an admin, in memory and in Redis shared by two instances (a change
 * made through one reaches a subscriber of the other).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { subscribeChanges } from '../support/changes.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const topics = uniqueTopics('recent');
const redisPrefix = `recent-${randomUUID().slice(0, 8)}`;
let cluster: MockCluster;
let producer: TestProducer;
const services: TestService[] = [];
const states: ConfiguredResultLog[] = [];
const tokens = { alice: '', bob: '', admin: '', writer: '' };
/** The instances of each mode: two sharing one Redis, or one memory instance twice. */
const modes: Record<'memory' | 'redis', { a?: TestService; b?: TestService }> = { memory: {}, redis: {} };

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  producer = await createTestProducer(cluster.bootstrapServers);
  tokens.alice = await mintToken({ sub: 'alice' }, { expiresInSeconds: 600 });
  tokens.bob = await mintToken({ sub: 'bob' }, { expiresInSeconds: 600 });
  tokens.admin = await mintToken({ sub: 'root', scope: 'tests:read tests:write tests:admin' }, { expiresInSeconds: 600 });
  tokens.writer = await mintToken({ sub: 'alice', scope: 'tests:write' }, { expiresInSeconds: 600 });
  const kafka = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests };
  const memory = await startTestService({ brokers: cluster.bootstrapServers, env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-mem` } });
  modes.memory = { a: memory, b: memory };
  // Each Redis instance on connections of its own, as a replica has. Each consumes in a group of
  // its own (quicker to join on the mock broker than one group of two): both store every result,
  // and the shared log keeps, and announces, one copy.
  const redisEnv = { ...kafka, STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix };
  const [a, b] = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix }), createSilentLogger());
      states.push(state);
      return startTestService({ brokers: cluster.bootstrapServers, env: { ...redisEnv, KAFKA_GROUP_ID: `${topics.group}-redis-${name}` }, log: state.log });
    }),
  );
  modes.redis = { a, b };
  services.push(memory, a as TestService, b as TestService);
  await Promise.all(services.map((svc) => svc.ready()));
}, 60_000);

afterAll(async () => {
  await Promise.all(services.map((svc) => svc.stop()));
  await Promise.all(states.map((state) => state.dispose()));
  await producer?.disconnect();
  await cluster?.stop();
  await deleteRedisKeys(`${redisPrefix}:*`);
});

const RECENT = `query($first: Int, $after: String, $status: [TestStatus!]) {
  recentTests(first: $first, after: $after, status: $status) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { cursor node { correlationId } }
    nodes { correlationId status messageCount input createdAt updatedAt messages { totalCount nodes { sequence } } }
  }
}`;
// Light enough for the cost limit at a page of 100.
const RECENT_IDS = `query($first: Int, $after: String) { recentTests(first: $first, after: $after) { totalCount nodes { correlationId } } }`;
const CHANGES = `subscription { testChanges { kind test { correlationId status messageCount input messages { totalCount } } } }`;

type Page = { recentTests: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: Array<Record<string, any>> } };

const recent = (svc: TestService, token: string, variables: Record<string, unknown> = {}, query = RECENT) =>
  postGraphQL<Page>(svc.url, query, variables, { token });
const ids = (response: Awaited<ReturnType<typeof recent>>) => response.body.data?.recentTests.nodes.map((node) => node.correlationId as string) ?? [];
const start = async (svc: TestService, token: string, name: string): Promise<string> => {
  const response = await postGraphQL(svc.url, `mutation($name: String) { startTest(input: { name: $name }) { correlationId } }`, { name }, { token });
  expect(response.body.errors).toBeUndefined();
  // Apart by a few milliseconds, so that newest first is one order.
  await new Promise((resolve) => setTimeout(resolve, 3));
  return response.body.data?.startTest.correlationId as string;
};
const changeSubscriptions = async (svc: TestService) => Number(/^rcs_change_subscriptions (\d+)$/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1]);
const statusOf = async (svc: TestService, token: string, id: string) =>
  (await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { status } }`, { id }, { token })).body.data?.test?.status as string | undefined;

describe.each(['memory', 'redis'] as const)('recentTests and testChanges (%s)', (mode) => {
  it("lists each caller's own tests newest first, pages and filters them; the admin scope lists everyone's", async () => {
    const { a, b } = modes[mode] as { a: TestService; b: TestService };
    const mine = [await start(a, tokens.alice, 'one'), await start(a, tokens.alice, 'two'), await start(a, tokens.alice, 'three')];
    const bobs = await start(a, tokens.bob, 'bob');
    await producer.send(topics.results, [result(mine[0] as string, { sequence: 1, status: 'COMPLETED', final: true })]);
    await eventually(async () => (await statusOf(b, tokens.alice, mine[0] as string)) === 'COMPLETED', 15_000, 'the first test to complete');

    const first = await recent(b, tokens.alice, { first: 2 });
    expect(first.body.errors).toBeUndefined();
    expect(ids(first)).toEqual([mine[2], mine[1]]);
    expect(first.body.data?.recentTests).toMatchObject({ totalCount: 3, pageInfo: { hasNextPage: true } });
    expect(first.body.data?.recentTests.nodes[0]).toMatchObject({ status: 'PENDING', messageCount: 0, input: { name: 'three' }, messages: { totalCount: 0 } });
    const second = await recent(b, tokens.alice, { first: 2, after: first.body.data?.recentTests.pageInfo.endCursor });
    expect(ids(second)).toEqual([mine[0]]);
    expect(second.body.data?.recentTests.pageInfo.hasNextPage).toBe(false);
    expect(second.body.data?.recentTests.nodes[0]).toMatchObject({
      status: 'COMPLETED',
      messageCount: 1,
      messages: { totalCount: 1, nodes: [{ sequence: 1 }] },
    });

    const completed = await recent(b, tokens.alice, { status: ['COMPLETED', 'FAILED'] });
    expect(ids(completed)).toEqual([mine[0]]);
    expect(completed.body.data?.recentTests.totalCount).toBe(1);
    expect(ids(await recent(b, tokens.bob))).toEqual([bobs]);
    const everyone = ids(await recent(b, tokens.admin, { first: 100 }, RECENT_IDS));
    expect(everyone.filter((id) => [...mine, bobs].includes(id))).toEqual([bobs, mine[2], mine[1], mine[0]]);
  });

  it('refuses a cursor that is not one and a page size out of range with BAD_USER_INPUT, and a caller without the read scope', async () => {
    const { b } = modes[mode] as { b: TestService };
    for (const variables of [{ after: 'not-a-cursor' }, { first: 0 }, { first: 101 }]) {
      const response = await recent(b, tokens.alice, variables, RECENT_IDS);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(response.body.data ?? null).toBeNull();
    }
    expect((await recent(b, tokens.writer)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // The cost model counts a page of tests times what is asked of each, like `tests` and `messages`.
    expect((await recent(b, tokens.alice, { first: 100 })).body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it("announces each caller's own tests' changes over graphql-ws, every test's to the admin scope, across instances", async () => {
    const { a, b } = modes[mode] as { a: TestService; b: TestService };
    // Subscribed on one instance; the probes, the tests and their results go through the other.
    const subscribe = (token: string, owner: string) => subscribeChanges({ url: b.url, token, query: CHANGES, owner, probeLog: a.log });
    const [alice, bob, admin] = [await subscribe(tokens.alice, 'alice'), await subscribe(tokens.bob, 'bob'), await subscribe(tokens.admin, 'root')];
    const alices = await start(a, tokens.alice, 'watched');
    const bobs = await start(a, tokens.bob, 'watched');
    await producer.send(topics.results, [result(alices, { sequence: 1, status: 'FAILED', final: true })]);

    await eventually(() => admin.of(alices, bobs).length >= 3, 15_000, 'the admin to see three changes');
    await eventually(() => alice.of(alices).length >= 2, 15_000, 'alice to see two changes');
    // The input of an update is the test's, whether or not the change carried it (on Redis it does not).
    expect(alice.of(alices, bobs)).toEqual([
      { kind: 'CREATED', test: { correlationId: alices, status: 'PENDING', messageCount: 0, input: { name: 'watched' }, messages: { totalCount: 0 } } },
      { kind: 'UPDATED', test: { correlationId: alices, status: 'FAILED', messageCount: 1, input: { name: 'watched' }, messages: { totalCount: 1 } } },
    ]);
    expect(bob.of(alices, bobs)).toEqual([
      { kind: 'CREATED', test: { correlationId: bobs, status: 'PENDING', messageCount: 0, input: { name: 'watched' }, messages: { totalCount: 0 } } },
    ]);
    expect(admin.of(alices, bobs).map((c) => [c.kind, c.test.correlationId])).toEqual([
      ['CREATED', alices],
      ['CREATED', bobs],
      ['UPDATED', alices],
    ]);
    // Nobody saw a change of someone else's test, the probes included.
    expect(alice.changes.results.every((r) => [...alice.probes, alices].includes(r.data?.testChanges.test.correlationId as string))).toBe(true);
    expect(bob.changes.results.every((r) => [...bob.probes, bobs].includes(r.data?.testChanges.test.correlationId as string))).toBe(true);
    expect(await changeSubscriptions(b)).toBe(3);
    for (const { client } of [alice, bob, admin]) await client.dispose();
    await eventually(async () => (await changeSubscriptions(b)) === 0, 5000, 'no change subscription left');
  });

  it('refuses testChanges without the read scope', async () => {
    const { b } = modes[mode] as { b: TestService };
    const client = createWsClient(b.url, { connectionParams: { authorization: `Bearer ${tokens.writer}` } });
    const changes = collect(client, CHANGES);
    const errors = await changes.done.then(
      () => changes.results.flatMap((r) => r.errors ?? []),
      (error: unknown) => error as Array<{ extensions?: Record<string, unknown> }>,
    );
    await client.dispose();
    expect(errors[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
