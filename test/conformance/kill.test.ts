/**
 * Conformance (d), on each broker: three service processes in one consumer group over Redis share a
 * six-partition topic, and one killed with SIGKILL in the middle of a stream loses nothing and
 * duplicates nothing: what it stored but had not committed comes back to a survivor, which finds it
 * stored already and neither stores nor pushes it again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { metric, spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { uniqueTopics } from '../support/service.js';

const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;
const READ_ALL = `query($id: ID!) { test(correlationId: $id) { messageCount messages(first: 1000) { nodes { sequence } } } }`;
const startTest = async (svc: ServiceProcess) =>
  (await postGraphQL(svc.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string;
const sequences = async (svc: ServiceProcess, id: string) =>
  ((await postGraphQL(svc.url, READ_ALL, { id })).body.data?.test?.messages.nodes as Array<{ sequence: number }> | undefined)?.map((n) => n.sequence);
const STORED = /^rcs_records_total\{outcome="stored"\} (\d+)$/m;
const DUPLICATE = /^rcs_records_total\{outcome="duplicate"\} (\d+)$/m;

describe.each(TEST_BROKERS)('a replica killed mid-stream on $name', (kind) => {
  const topics = uniqueTopics(`kill-${kind.name}`);
  const prefix = `rcs-kill-${kind.name}-${process.pid}-${Date.now()}`;
  let broker: TestBroker;
  let producer: TestProducer;
  const processes: ServiceProcess[] = [];

  const start = async (name: string, extra: Record<string, string> = {}) => {
    const svc = await spawnService(name, {
      STATE_STORE: 'redis',
      REDIS_KEY_PREFIX: prefix,
      KAFKA_BROKERS: broker.bootstrapServers.join(','),
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: topics.group,
      ...broker.groupEnv,
      INSTANCE_ID: name,
      ...extra,
    });
    processes.push(svc);
    return svc;
  };

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 6 },
      { name: topics.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    for (const svc of processes) svc.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await producer?.disconnect();
    await broker?.stop();
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('loses and duplicates nothing, in the store or on a subscription', { timeout: 180_000 }, async () => {
    // The victim commits only at its 10-minute interval, so everything it stores is uncommitted
    // when it dies and must be redelivered to a survivor.
    const [a, victim, c] = await Promise.all([start('a'), start('victim', { ...broker.killedMemberEnv, KAFKA_COMMIT_INTERVAL_MS: '600000' }), start('c')]);
    await Promise.all([a, victim, c].map((r) => waitReady(r)));
    const assignments = await eventually(
      () => {
        const all = [a, victim, c].map((r) => r.assignment());
        return all.flat().length === 6 && all.every((x) => x.length === 2) && all;
      },
      60_000,
      'two partitions each',
    );
    expect(assignments.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);

    const ids = [await startTest(a), await startTest(a), await startTest(a)];
    const client = createWsClient(c.url);
    const subs = ids.map((id) => collect(client, FOLLOW, { id }));
    await collect(client, '{ __typename }').done;

    // 3 tests × 60 results, each test on two partitions, so every partition carries records; the
    // victim is killed half way, after it has stored (and pushed) records of its partitions.
    const perTest = 60;
    let storedByVictim = 0;
    for (let sequence = 1; sequence <= perTest; sequence++) {
      await producer.send(
        topics.results,
        ids.map((id, i) => ({ ...result(id, { sequence, final: sequence === perTest }), partition: (i * 2 + (sequence % 2)) % 6 })),
      );
      if (sequence === perTest / 2) {
        storedByVictim = await eventually(
          async () => {
            const n = await metric(victim, STORED);
            return n > 0 && n;
          },
          30_000,
          'the victim to store records',
        );
        victim.kill('SIGKILL');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await victim.exited).toBeNull();
    expect(storedByVictim).toBeGreaterThan(0);

    // Its partitions go to the survivors once its session expires; everything arrives exactly once.
    const expected = Array.from({ length: perTest }, (_, k) => k + 1);
    for (const id of ids) await eventually(async () => (await sequences(a, id))?.length === perTest, 90_000, `${id} complete`);
    for (const r of [a, c]) for (const id of ids) expect(await sequences(r, id)).toEqual(expected);
    await eventually(
      () => {
        const all = [a, c].map((r) => r.assignment());
        return all.flat().length === 6 && new Set(all.flat()).size === 6;
      },
      60_000,
      "the victim's partitions to move to the survivors",
    );
    // The redelivered records were recognised as stored: duplicates, not stored again.
    // A counter moves once its store answered, after the push: wait for the redelivery to be counted.
    const countsOf = () => Promise.all([a, c].map(async (r) => ({ stored: await metric(r, STORED), duplicates: await metric(r, DUPLICATE) })));
    await eventually(async () => (await countsOf()).some((s) => s.duplicates > 0), 30_000, 'the redelivered records counted as duplicates');
    const survivors = await countsOf();
    const storedBySurvivors = survivors.reduce((sum, s) => sum + s.stored, 0);
    // Every record was stored once: the victim stored at least what it reported, the survivors the rest.
    expect(storedBySurvivors).toBeLessThanOrEqual(3 * perTest - storedByVictim);
    expect(survivors.reduce((sum, s) => sum + s.duplicates, 0)).toBeGreaterThan(0);

    // The subscriber saw every message once. The final one may overtake records of the other
    // partition, so a subscription that ended early is completed from the store.
    for (const [i, sub] of subs.entries()) {
      await sub.done;
      const seen = sub.results.map((r) => r.data?.testMessages.sequence as number);
      expect(new Set(seen).size).toBe(seen.length);
      const rest = ((await sequences(c, ids[i] as string)) ?? []).filter((s) => !seen.includes(s));
      expect([...seen, ...rest].sort((x, y) => x - y)).toEqual(expected);
      expect(seen.length).toBeGreaterThan(perTest / 2);
    }
    await client.dispose();
  });
});
