/**
 * Replicated in-memory mode: every replica consumes every partition into its own memory, under a
 * consumer group named after its instance id, and a restarted replica rebuilds its state from the
 * earliest retained record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { subscribeChanges } from '../support/changes.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const topics = uniqueTopics('replicated');
let cluster: MockCluster;
let producer: TestProducer;
const running: TestService[] = [];
const metricsOf = async (svc: TestService) => (await fetch(`${svc.url}/metrics`)).text();

const replica = async (instance: string) => {
  const svc = await startTestService({
    brokers: cluster.bootstrapServers,
    // A short session: the mock broker's rebalance after a member leaves waits about that long.
    env: {
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      STATE_STORE: 'replicated',
      INSTANCE_ID: instance,
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: topics.group,
    },
  });
  running.push(svc);
  return svc;
};

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 3 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  producer = await createTestProducer(cluster.bootstrapServers);
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  await producer?.disconnect();
  await cluster?.stop();
});

describe('replicated memory mode', () => {
  it('gives each replica a stable group of its own, consuming every partition, and rebuilds a restarted one', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([replica('a'), replica('b')]);
    expect(a.config.kafka.groupId).toBe(`${topics.group}.a`);
    expect(b.config.kafka.groupId).toBe(`${topics.group}.b`);
    await Promise.all([a.ready(), b.ready()]);

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await postGraphQL(a.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string);
    // Known on A only (started there) until results arrive: B learns tests from the topic.
    await producer.send(
      topics.results,
      ids.flatMap((id, partition) => [1, 2, 2, 3].map((sequence) => ({ ...result(id, { sequence, final: sequence === 3 }), partition }))),
    );
    for (const svc of [a, b]) {
      for (const id of ids) await eventually(async () => (await svc.log.get(id))?.messages.length === 3, 20_000, `${id} complete`);
      // A chunk is counted once its store answered, which can be after it is readable.
      const { stats } = svc.service.broker.consumer;
      await eventually(() => stats.stored + stats.duplicates >= 12, 20_000, 'every record counted');
      expect(stats.stored).toBe(9);
      expect(stats.duplicates).toBe(3);
    }

    // Owned on both: B learned each test's owner from the start request A produced.
    for (const svc of [a, b]) expect((await authedFetch(`${svc.url}/tests/${ids[0]}`)).status).toBe(200);

    // The requests consumer's own series: a replica whose requests consumer stopped reading learns no
    // test started elsewhere, while it still answers reads, so operators watch these.
    for (const svc of [a, b]) {
      // Each replica reads the three start requests (a rejoin would read them again: at least three).
      const read = async () => Number(/^rcs_request_records_total\{outcome="start_request"\} (\d+)$/m.exec(await metricsOf(svc))?.[1]);
      await eventually(async () => (await read()) >= 3, 20_000, 'the three start requests read');
      const metrics = await metricsOf(svc);
      expect(metrics).toMatch(/^rcs_request_records_total\{outcome="malformed"\} 0$/m);
      expect(metrics).toMatch(/^rcs_request_consumer_state\{state="joined"\} 1$/m);
      expect(metrics).toMatch(/^rcs_request_consumer_state\{state="stalled"\} 0$/m);
      expect(metrics).toMatch(/^rcs_request_consumer_state_changes_total\{state="joined"\} [1-9]/m);
      expect(metrics).toMatch(/^rcs_request_consumer_state_changes_total\{state="stalled"\} 0$/m);
      expect(metrics).toMatch(/^rcs_request_consumer_seconds_since_fetch \d/m);
    }

    await b.stop();
    const again = await replica('b');
    await again.ready();
    for (const id of ids) await eventually(async () => (await again.log.get(id))?.status === 'COMPLETED', 20_000, `${id} rebuilt`);
    await eventually(() => again.service.broker.consumer.stats.stored >= 9, 20_000, 'the rebuild counted');
    expect(again.service.broker.consumer.stats.stored).toBe(9);

    // Live pushes work on the rebuilt replica too: it consumes the new record itself.
    const id = ids[1] as string;
    await again.log.create({ correlationId: `${id}-live`, input: null, owner: 'tester' });
    const live = createWsClient(again.url);
    const sub = collect(live, `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`, { id: `${id}-live` });
    await collect(live, '{ __typename }').done;
    await producer.send(topics.results, [result(`${id}-live`, { sequence: 1, final: true })]);
    await sub.done;
    await live.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1]);
  });

  it(
    'lists, reads and announces a test to its owner on every replica, wherever it was started, and rebuilds its owner after a restart',
    { timeout: 90_000 },
    async () => {
      const [c, d] = await Promise.all([replica('c'), replica('d')]);
      await Promise.all([c.ready(), d.ready()]);
      const alice = await mintToken({ sub: 'alice' });
      const bob = await mintToken({ sub: 'bob' });
      const admin = await mintToken({ sub: 'root', scope: 'tests:read tests:admin' });
      const query = 'subscription { testChanges { kind test { correlationId status messageCount } } }';
      const aliceOnC = await subscribeChanges({ url: c.url, token: alice, query, owner: 'alice', probeLog: c.log });
      const aliceOnD = await subscribeChanges({ url: d.url, token: alice, query, owner: 'alice', probeLog: d.log });
      const bobOnD = await subscribeChanges({ url: d.url, token: bob, query, owner: 'bob', probeLog: d.log });
      const adminOnD = await subscribeChanges({ url: d.url, token: admin, query, owner: 'root', probeLog: d.log });

      const id = (await postGraphQL(c.url, 'mutation { startTest(input: { name: "on c" }) { correlationId } }', {}, { token: alice })).body.data?.startTest
        .correlationId as string;
      const listed = async (svc: TestService, token: string) => {
        const response = await postGraphQL(svc.url, '{ recentTests(first: 100) { nodes { correlationId status input createdAt } } }', {}, { token });
        return (response.body.data?.recentTests.nodes as Array<{ correlationId: string; status: string; input: unknown; createdAt: string }>).find(
          (node) => node.correlationId === id,
        );
      };
      const read = async (svc: TestService, token: string) =>
        postGraphQL(svc.url, 'query($id: ID!) { test(correlationId: $id) { status input } }', { id }, { token });
      // d learns the test, and its owner, from the start request c produced, before any result.
      await eventually(async () => (await listed(d, alice))?.status === 'PENDING', 20_000, 'alice on d to list the test started on c');
      expect(await listed(d, alice)).toEqual(await listed(c, alice));
      await producer.send(topics.results, [result(id, { sequence: 1, final: true })]);
      await eventually(async () => (await listed(d, alice))?.status === 'COMPLETED', 20_000, 'alice on d to see the test complete');
      expect((await read(d, alice)).body.data?.test).toEqual({ status: 'COMPLETED', input: { name: 'on c' } });
      expect((await authedFetch(`${d.url}/tests/${id}`, { token: alice })).status).toBe(200);
      // Another subject: not listed, and read as unknown.
      expect(await listed(d, bob)).toBeUndefined();
      expect((await read(d, bob)).body.data?.test ?? null).toBeNull();
      expect((await authedFetch(`${d.url}/tests/${id}`, { token: bob })).status).toBe(404);

      await eventually(() => aliceOnD.of(id).length >= 2 && aliceOnC.of(id).length >= 2 && adminOnD.of(id).length >= 2, 20_000, 'two changes on each replica');
      const created = { kind: 'CREATED', test: { correlationId: id, status: 'PENDING', messageCount: 0 } };
      const completed = { kind: 'UPDATED', test: { correlationId: id, status: 'COMPLETED', messageCount: 1 } };
      for (const subscription of [aliceOnC, aliceOnD, adminOnD]) expect(subscription.of(id)).toEqual([created, completed]);
      expect(bobOnD.of(id)).toEqual([]);

      // A test whose results reach d before its start request: the admin sees it at once; alice once the request names her.
      const early = `early-${id}`;
      await producer.send(topics.results, [result(early, { sequence: 1 })]);
      await eventually(() => adminOnD.of(early).length >= 1, 20_000, 'the admin on d to see the early test');
      expect(aliceOnD.of(early)).toEqual([]);
      await producer.send(topics.requests, [
        {
          key: early,
          headers: { correlation_id: early, 'rcs-owner': 'alice' },
          value: { correlationId: early, input: { name: 'early' }, requestedAt: new Date().toISOString() },
        },
      ]);
      await eventually(() => aliceOnD.of(early).length >= 1 && adminOnD.of(early).length >= 2, 20_000, 'alice on d to see the early test');
      const running = { correlationId: early, status: 'RUNNING', messageCount: 1 };
      expect(aliceOnD.of(early)).toEqual([{ kind: 'CREATED', test: running }]);
      expect(adminOnD.of(early)).toEqual([
        { kind: 'CREATED', test: running },
        { kind: 'UPDATED', test: running },
      ]);
      expect(bobOnD.of(early)).toEqual([]);
      for (const { client } of [aliceOnC, aliceOnD, bobOnD, adminOnD]) await client.dispose();

      // A restarted d rebuilds the tests with their owners from both topics.
      const before = await listed(d, alice);
      await d.stop();
      const again = await replica('d');
      await again.ready();
      await eventually(async () => (await listed(again, alice))?.status === 'COMPLETED', 20_000, 'alice on the restarted d to list the test');
      expect(await listed(again, alice)).toEqual(before);
      expect((await read(again, alice)).body.data?.test).toEqual({ status: 'COMPLETED', input: { name: 'on c' } });
      expect(await listed(again, bob)).toBeUndefined();
      expect((await again.log.get(early))?.owner).toBe('alice');
      expect(again.service.broker.requests?.stats.malformed).toBe(0);

      // A record of the requests topic that is not a start request is counted as such (the last
      // step: every replica of this file reads the topic from its start).
      await producer.send(topics.requests, [{ key: 'bad', value: 'not a start request' }]);
      const malformed = /^rcs_request_records_total\{outcome="malformed"\} 1$/m;
      await eventually(async () => malformed.test(await metricsOf(again)), 20_000, 'the malformed request counted');
    },
  );
});
