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

const replica = async (instance: string) => {
  const svc = await startTestService({
    brokers: cluster.bootstrapServers,
    // A short session: the mock broker's rebalance after a member leaves waits about that long.
    env: { KAFKA_SESSION_TIMEOUT_MS: '6000', STATE_STORE: 'replicated', INSTANCE_ID: instance, KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
  });
  running.push(svc);
  return svc;
};

beforeAll(async () => {
  cluster = await startMockCluster({ brokers: 1, topics: [{ name: topics.results, partitions: 3 }, { name: topics.requests, partitions: 1 }] });
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
    await producer.send(topics.results, ids.flatMap((id, partition) => [1, 2, 2, 3].map((sequence) => ({ ...result(id, { sequence, final: sequence === 3 }), partition }))));
    for (const svc of [a, b]) {
      for (const id of ids) await eventually(async () => (await svc.log.get(id))?.messages.length === 3, 20_000, `${id} complete`);
      expect(svc.service.ingest.consumer.stats.stored).toBe(9);
      expect(svc.service.ingest.consumer.stats.duplicates).toBe(3);
    }

    // A's tests are owned; B learned them from results only, so only the admin scope reads them there.
    expect((await authedFetch(`${a.url}/tests/${ids[0]}`)).status).toBe(200);

    await b.stop();
    const again = await replica('b');
    await again.ready();
    for (const id of ids) await eventually(async () => (await again.log.get(id))?.status === 'COMPLETED', 20_000, `${id} rebuilt`);
    expect(again.service.ingest.consumer.stats.stored).toBe(9);

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

  it('lists and announces a test on the replica that started it; the others know it through its results, for the admin scope only', { timeout: 60_000 }, async () => {
    const [c, d] = await Promise.all([replica('c'), replica('d')]);
    await Promise.all([c.ready(), d.ready()]);
    const alice = await mintToken({ sub: 'alice' });
    const admin = await mintToken({ sub: 'root', scope: 'tests:read tests:admin' });
    const query = 'subscription { testChanges { kind test { correlationId status messageCount } } }';
    const onC = await subscribeChanges({ url: c.url, token: alice, query, owner: 'alice', probeLog: c.log });
    const aliceOnD = await subscribeChanges({ url: d.url, token: alice, query, owner: 'alice', probeLog: d.log });
    const adminOnD = await subscribeChanges({ url: d.url, token: admin, query, owner: 'root', probeLog: d.log });

    const id = (await postGraphQL(c.url, 'mutation { startTest { correlationId } }', {}, { token: alice })).body.data?.startTest.correlationId as string;
    await producer.send(topics.results, [result(id, { sequence: 1, final: true })]);
    const listed = async (svc: TestService, token: string) => {
      const response = await postGraphQL(svc.url, '{ recentTests(first: 100) { nodes { correlationId status } } }', {}, { token });
      return (response.body.data?.recentTests.nodes as Array<{ correlationId: string; status: string }>).find((node) => node.correlationId === id);
    };
    await eventually(async () => (await listed(d, admin))?.status === 'COMPLETED', 20_000, 'the admin on d to list the test');
    await eventually(async () => (await listed(c, alice))?.status === 'COMPLETED', 20_000, 'alice on c to list the test');
    // d learned the test from its results, which name no owner: alice does not see it there.
    expect(await listed(d, alice)).toBeUndefined();

    await eventually(() => onC.of(id).length >= 2, 20_000, 'alice on c to see two changes');
    expect(onC.of(id).map((change) => [change.kind, change.test.status])).toEqual([['CREATED', 'PENDING'], ['UPDATED', 'COMPLETED']]);
    await eventually(() => adminOnD.of(id).length >= 1, 20_000, 'the admin on d to see the test');
    expect(adminOnD.of(id)).toEqual([{ kind: 'CREATED', test: { correlationId: id, status: 'COMPLETED', messageCount: 1 } }]);
    expect(aliceOnD.of(id)).toEqual([]);
    for (const { client } of [onC, aliceOnD, adminOnD]) await client.dispose();
  });
});
