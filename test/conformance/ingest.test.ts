/**
 * Conformance (b): on each broker, redelivery is idempotent (a full replay of the topic by a new
 * consumer group stores and pushes nothing twice), and malformed records are counted and skipped
 * without stopping the loop or their partition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

describe.each(TEST_BROKERS)('consumer on $name', (kind) => {
  const topics = uniqueTopics(`ingest-${kind.name}`);
  let broker: TestBroker;
  let producer: TestProducer;
  let svc: TestService;
  const env = () => ({ KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group });

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 3 },
      { name: topics.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
    svc = await startTestService({ brokers: broker.bootstrapServers, env: env() });
    await svc.ready();
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await producer?.disconnect();
    await broker?.stop();
  });

  it('skips malformed records with a count, and keeps consuming the same partition', async () => {
    const id = `malformed-${Date.now()}`;
    const before = svc.service.broker.consumer.stats.malformed;
    // All on partition 0, so a stuck record would block the good ones behind it.
    await producer.send(topics.results, [
      { partition: 0, value: 'not json at all' },
      { partition: 0, value: [1, 2, 3] },
      { partition: 0, value: { sequence: 1 } }, // no correlation id
      { partition: 0, value: { correlationId: id, sequence: 'one' } },
      { partition: 0, value: { correlationId: id, status: 'exploded' } },
      { partition: 0, value: '' },
      { ...result(id, { sequence: 1, payload: 'good' }), partition: 0 },
    ]);
    const stored = await eventually(async () => (await svc.log.get(id))?.messages.length === 1 && svc.log.get(id), 15_000, 'the good record');
    expect(stored && stored.messages[0]?.payload).toBe('good');
    expect(svc.service.broker.consumer.stats.malformed - before).toBe(6);
    expect((await svc.service.readiness()).ready).toBe(true);
  });

  it('a full replay of the topic from the beginning stores nothing twice and pushes nothing twice', async () => {
    const id = `replay-${Date.now()}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    await producer.send(
      topics.results,
      [1, 2, 3, 4].map((sequence) => result(id, { messageId: `r-${sequence}`, sequence })),
    );
    await eventually(async () => (await svc.log.get(id))?.messages.length === 4, 15_000, 'four stored');
    const client = createWsClient(svc.url);
    const sub = collect(client, `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`, { id });
    await sub.waitFor(4);

    // A second consumer group over the same state and the same live bus reads every record of the
    // topic again: the at-least-once redelivery a crash before the commit would cause, for all at once.
    const shared = svc.log;
    const replayTopics = { ...env(), KAFKA_GROUP_ID: `${topics.group}-replay` };
    const replayer = await startTestService({ brokers: broker.bootstrapServers, env: replayTopics, log: shared });
    const stats = replayer.service.broker.consumer.stats;
    const total = await eventually(
      () => {
        const seen = stats.stored + stats.duplicates + stats.malformed;
        return seen >= 11 && seen;
      },
      20_000,
      'the replay to reach the end',
    );
    await replayer.stop();

    expect(total).toBeGreaterThanOrEqual(11);
    expect(stats.stored).toBe(0);
    expect((await svc.log.get(id))?.messages.map((m) => m.sequence)).toEqual([1, 2, 3, 4]);
    // The original subscriber received the four once and nothing from the replay.
    await producer.send(topics.results, [result(id, { sequence: 5, final: true })]);
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it('the same replay into a shared result log delivers nothing: duplicates are never announced', async () => {
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 1000, maxMessagesPerTest: 1000 });
    const id = `shared-log-${Date.now()}`;
    // Followed from before the first pass: live messages are not checked against a snapshot, so a
    // duplicate announced by the second pass would be delivered a second time.
    await log.create({ correlationId: id, input: null, owner: null });
    const follower = await log.follow(id, { queueLimit: 100 });
    const delivered: Array<number | null> = [];
    const reading = (async () => {
      for (let next = await follower.next(); next.done !== true; next = await follower.next()) delivered.push(next.value.sequence);
    })();
    await producer.send(
      topics.results,
      [1, 2].map((sequence) => result(id, { sequence })),
    );
    const first = await startTestService({ brokers: broker.bootstrapServers, env: { ...env(), KAFKA_GROUP_ID: `${topics.group}-a` }, log });
    await eventually(async () => (await log.get(id))?.messages.length === 2, 20_000, 'first pass');
    await first.stop();

    // The second pass writes into the same state.
    const second = await startTestService({ brokers: broker.bootstrapServers, env: { ...env(), KAFKA_GROUP_ID: `${topics.group}-b` }, log });
    await eventually(() => second.service.broker.consumer.stats.duplicates >= 2, 20_000, 'second pass');
    await second.stop();
    await follower.return?.();
    await reading;
    expect(delivered).toEqual([1, 2]);
    await log.dispose();
  });
});
