/**
 * Two replicas in one consumer group sharing Redis: whichever replica consumes a record, a read or
 * a subscription on any replica sees it, without gap or duplicate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createSilentLogger } from '../../src/logger.js';
import { createState, type State } from '../../src/state.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const topics = uniqueTopics('replicas');
const prefix = `rcs-e2e-${process.pid}-${Date.now()}`;
let cluster: MockCluster;
let producer: TestProducer;
const states: State[] = [];
const replicas: TestService[] = [];

async function replica(): Promise<TestService> {
  const env = {
    STATE_STORE: 'redis',
    REDIS_KEY_PREFIX: prefix,
    KAFKA_RESULTS_TOPIC: topics.results,
    KAFKA_REQUESTS_TOPIC: topics.requests,
    KAFKA_GROUP_ID: topics.group,
    KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
  const state = createState(loadConfig(env).store, createSilentLogger());
  states.push(state);
  const svc = await startTestService({ brokers: cluster.bootstrapServers, env, store: state.store, pubsub: state.pubsub });
  replicas.push(svc);
  return svc;
}

beforeAll(async () => {
  cluster = await startMockCluster({ brokers: 1, topics: [{ name: topics.results, partitions: 4 }, { name: topics.requests, partitions: 1 }] });
  producer = await createTestProducer(cluster.bootstrapServers);
  await Promise.all([replica(), replica()]);
  await Promise.all(replicas.map((r) => r.ready()));
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all(states.map((s) => s.dispose()));
  await producer?.disconnect();
  await cluster?.stop();
});

describe('two replicas sharing Redis', () => {
  it('share the partitions of the results topic', async () => {
    const assigned = await eventually(() => {
      const states = replicas.map((r) => r.service.ingest.consumer.state().state);
      return states.every((s) => s === 'joined') && states;
    }, 30_000, 'both replicas in the group');
    expect(assigned).toEqual(['joined', 'joined']);
  });

  it('tests started on one replica are read and followed on the other, every message exactly once', async () => {
    const [a, b] = replicas as [TestService, TestService];
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const started = await postGraphQL(a.url, `mutation { startTest { correlationId } }`);
      ids.push(started.body.data?.startTest.correlationId as string);
    }
    for (const id of ids) expect((await authedFetch(`${b.url}/tests/${id}`)).status).toBe(200);

    const client = createWsClient(b.url);
    const subs = ids.map((id) => collect(client, `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`, { id }));
    await collect(client, '{ __typename }').done; // the subscriptions are registered once the socket answers
    // One partition per test (as keying by correlation id does), so each replica consumes some tests.
    await producer.send(
      topics.results,
      ids.flatMap((id, partition) => [1, 2, 3, 3, 4].map((sequence) => ({ ...result(id, { sequence, final: sequence === 4 }), partition }))),
    );
    await Promise.all(subs.map((s) => s.done));
    await client.dispose();
    for (const sub of subs) expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3, 4]);

    for (const r of replicas) {
      for (const id of ids) {
        const read = await postGraphQL(r.url, `query($id: ID!) { test(correlationId: $id) { status messageCount } }`, { id });
        expect(read.body.data?.test).toEqual({ status: 'COMPLETED', messageCount: 4 });
      }
    }
    // Both replicas consumed part of the records, and the duplicates were stored nowhere.
    const stored = replicas.map((r) => r.service.ingest.consumer.stats.stored);
    expect(stored.every((n) => n > 0)).toBe(true);
    expect(stored.reduce((x, y) => x + y, 0)).toBe(16);
    expect(replicas.map((r) => r.service.ingest.consumer.stats.duplicates).reduce((x, y) => x + y, 0)).toBe(4);
  });
});
