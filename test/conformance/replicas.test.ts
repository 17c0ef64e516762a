/**
 * Conformance (e), on each broker: replicas in one consumer group sharing Redis. Two replicas, on
 * each Redis shape (one node, a Redis Cluster, a Sentinel set): whichever consumes a record, a
 * read or a subscription on any replica sees it, without gap or duplicate.
 * Scaling out from one replica process to three while results stream in: nothing lost, nothing
 * duplicated, and the partitions end up shared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { metric, spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { openRedisShape, REDIS_SHAPES, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;
const READ_ALL = `query($id: ID!) { test(correlationId: $id) { messages(first: 1000) { nodes { sequence } } } }`;

describe.each(TEST_BROKERS)('on $name', (kind) => {
  // The two-replica scenario on each Redis shape, with topics (and a consumer group) of its own.
  const topicsOf = Object.fromEntries(REDIS_SHAPES.map((shape) => [shape, uniqueTopics(`replicas-${kind.name}-${shape}`)]));
  const scale = uniqueTopics(`scale-${kind.name}`);
  const prefix = `rcs-replicas-${kind.name}-${process.pid}-${Date.now()}`;
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start([
      ...Object.values(topicsOf).flatMap((topics) => [
        { name: topics.results, partitions: 4 },
        { name: topics.requests, partitions: 1 },
      ]),
      { name: scale.results, partitions: 6 },
      { name: scale.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
    await deleteRedisKeys(`${prefix}*`);
  });

  describe.each(REDIS_SHAPES)('two replicas sharing Redis (%s)', (shapeName) => {
    const topics = topicsOf[shapeName] as ReturnType<typeof uniqueTopics>;
    const states: ConfiguredResultLog[] = [];
    const replicas: TestService[] = [];
    let shape: RedisShape;

    async function replica(): Promise<TestService> {
      const env = {
        ...shape.env,
        REDIS_KEY_PREFIX: `${prefix}-two`,
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: topics.group,
        ...broker.groupEnv,
      };
      const state = createResultLogFromConfig(loadConfig(env), createSilentLogger());
      states.push(state);
      const svc = await startTestService({ brokers: broker.bootstrapServers, env, log: state.log });
      replicas.push(svc);
      return svc;
    }

    beforeAll(async () => {
      shape = await openRedisShape(shapeName);
      await Promise.all([replica(), replica()]);
      await Promise.all(replicas.map((r) => r.ready()));
    }, 90_000);

    afterAll(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      await Promise.all(states.map((s) => s.dispose()));
      await shape?.close();
    });

    it('share the partitions of the results topic', async () => {
      const assigned = await eventually(
        () => {
          const states = replicas.map((r) => r.service.broker.consumer.state().state);
          return states.every((s) => s === 'joined') && states;
        },
        30_000,
        'both replicas in the group',
      );
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
      // Both replicas consumed part of the records, and the duplicates were stored nowhere. A
      // replica counts a chunk once its store answered, which can be after the final push.
      const statsOf = () => replicas.map((r) => r.service.broker.consumer.stats);
      await eventually(() => statsOf().reduce((n, s) => n + s.stored + s.duplicates, 0) >= 20, 30_000, 'every record counted');
      const stored = statsOf().map((s) => s.stored);
      expect(stored.every((n) => n > 0)).toBe(true);
      expect(stored.reduce((x, y) => x + y, 0)).toBe(16);
      expect(replicas.map((r) => r.service.broker.consumer.stats.duplicates).reduce((x, y) => x + y, 0)).toBe(4);
    });
  });

  // About the consumer group rather than Redis: on one Redis node only.
  describe('scaling out from one replica to three during a stream', () => {
    const processes: ServiceProcess[] = [];
    const start = async (name: string) => {
      const svc = await spawnService(name, {
        STATE_STORE: 'redis',
        REDIS_KEY_PREFIX: `${prefix}-scale`,
        KAFKA_BROKERS: broker.bootstrapServers.join(','),
        KAFKA_RESULTS_TOPIC: scale.results,
        KAFKA_REQUESTS_TOPIC: scale.requests,
        KAFKA_GROUP_ID: scale.group,
        ...broker.groupEnv,
        INSTANCE_ID: name,
      });
      processes.push(svc);
      return svc;
    };
    const sequences = async (svc: ServiceProcess, id: string) =>
      ((await postGraphQL(svc.url, READ_ALL, { id })).body.data?.test?.messages.nodes as Array<{ sequence: number }> | undefined)?.map((n) => n.sequence);

    afterAll(async () => {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
    });

    it('loses and duplicates nothing, and ends with the partitions shared by all three', { timeout: 180_000 }, async () => {
      const first = await start('first');
      await waitReady(first);
      await eventually(() => first.assignment().length === 6, 30_000, 'the first replica to own every partition');

      const ids = [0, 1, 2].map(() => '');
      for (const i of ids.keys())
        ids[i] = (await postGraphQL(first.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string;
      const client = createWsClient(first.url);
      const subs = ids.map((id) => collect(client, FOLLOW, { id }));
      await collect(client, '{ __typename }').done;

      // Results stream in on every partition; two more replicas are started once it is under way,
      // and it goes on until both have joined and consumed a while, then ends with a final record.
      let sequence = 0;
      const send = async (final = false) => {
        sequence++;
        await producer.send(
          scale.results,
          ids.map((id, i) => ({ ...result(id, { sequence, final }), partition: (i * 2 + (sequence % 2)) % 6 })),
        );
        await new Promise((r) => setTimeout(r, 50));
      };
      for (let k = 0; k < 20; k++) await send();
      let joined = false;
      const scaling = Promise.all([start('second'), start('third')]).then(async (added) => {
        await Promise.all(added.map((p) => waitReady(p)));
        // Each has joined once it is ready; wait until the three assignments are disjoint and cover the topic.
        await eventually(
          () => {
            const all = processes.map((p) => p.assignment());
            return all.every((a) => a.length > 0) && all.flat().length === 6 && new Set(all.flat()).size === 6;
          },
          90_000,
          'the partitions to be shared by three',
        );
        joined = true;
      });
      scaling.catch(() => undefined);
      const deadline = Date.now() + 150_000;
      while (!joined && Date.now() < deadline) await send();
      await scaling;
      for (let k = 0; k < 20; k++) await send();
      await send(true);
      const total = sequence;
      const expected = Array.from({ length: total }, (_, k) => k + 1);

      for (const id of ids) await eventually(async () => (await sequences(first, id))?.length === total, 90_000, `${id} complete`);
      for (const p of processes) for (const id of ids) expect(await sequences(p, id)).toEqual(expected);
      for (const [i, sub] of subs.entries()) {
        await sub.done;
        const seen = sub.results.map((r) => r.data?.testMessages.sequence as number);
        expect(new Set(seen).size).toBe(seen.length);
        // The final record may overtake records of the test's other partition: the rest is in the store.
        const rest = ((await sequences(first, ids[i] as string)) ?? []).filter((s) => !seen.includes(s));
        expect([...seen, ...rest].sort((x, y) => x - y)).toEqual(expected);
      }
      await client.dispose();

      const assignments = processes.map((p) => p.assignment());
      expect(assignments.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(assignments.map((a) => a.length)).toEqual([2, 2, 2]);
      // The added replicas took part of the stream, and nothing was stored twice across the three.
      // A counter moves once its store answered, which can be after the final push: wait for the sum.
      const storedBy = () => Promise.all(processes.map((p) => metric(p, /^rcs_records_total\{outcome="stored"\} (\d+)$/m)));
      const sum = (counts: number[]) => counts.reduce((x, y) => x + y, 0);
      await eventually(async () => sum(await storedBy()) >= 3 * total, 30_000, 'every record counted as stored');
      const stored = await storedBy();
      expect(stored.slice(1).every((n) => n > 0)).toBe(true);
      expect(sum(stored)).toBe(3 * total);
    });
  });
});

afterAll(stopRedisShapes, 60_000);
