/**
 * A compressed batch the service cannot decompress, on a real Kafka broker. The snappy codec is
 * registered as missing, as when its package fails to load; kafkajs then fails the whole fetch,
 * which used to crash the consumer and rejoin the group every second while `/readyz` flapped
 * between 200 and 503. Now: one error line naming the codec and the partition, `/readyz`'s
 * consumer check naming that reason for as long as it lasts (while the process stays ready, 200:
 * it serves its API from the store), retries that slow down, no record skipped; and once an
 * operator moves the group past the batch, the consumer recovers by itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerKafkaCodecs } from '../../src/ingest/kafka-codecs.js';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { produceWithKcat } from '../support/compressed-producers.js';
import { CODEC_IDS, storedBatches } from '../support/segments.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

// kafkajs's codec registry is global to the process and the first registration wins: this one,
// made before any client exists, stands in for a snappy package that failed to load.
const registration = registerKafkaCodecs({
  snappy: () => {
    throw new Error('simulated: kafkajs-snappy failed to load');
  },
});

const topics = uniqueTopics('nocodec');
const logs: Array<Record<string, unknown>> = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
let dir: string;
let cluster: KafkaCluster;
let admin: Admin;
let producer: TestProducer;
let svc: TestService;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kafka-nocodec-'));
  cluster = await startKafka({
    nodes: 1,
    dir,
    topics: [
      { name: topics.results, partitions: 2 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  admin = await cluster.admin();
  producer = await createTestProducer(cluster.bootstrapServers);
  svc = await startTestService({
    brokers: cluster.bootstrapServers,
    logger,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
  });
  await svc.ready();
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await producer?.disconnect();
  await cluster?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const readyz = async () => {
  const response = await fetch(`${svc.url}/readyz`);
  return { status: response.status, consumer: ((await response.json()) as { checks: Record<string, string> }).checks.consumer };
};
const snappyRecords = (id: string) =>
  Array.from({ length: 30 }, (_, i) => ({ key: id, value: JSON.stringify({ correlationId: id, sequence: i + 1, payload: 'snappy '.repeat(30) }) }));

describe('a codec that is missing', () => {
  it('is named at startup', () => {
    expect(registration.missing).toEqual([{ codec: 'snappy', reason: 'simulated: kafkajs-snappy failed to load' }]);
    expect(logs.some((l) => l.level === 40 && l.codec === 'snappy' && String(l.msg).includes('snappy codec unavailable'))).toBe(true);
  });

  it('stops the consumer with one clear error and a steady consumer check naming the codec and the partition, skipping nothing', async () => {
    const id = `blocked-${Date.now()}`;
    await producer.send(topics.results, [{ ...result(id, { sequence: 1, payload: 'gzip is fine' }), partition: 0 }]);
    await eventually(async () => (await svc.log.get(id))?.messages.length === 1, 15_000, 'the uncompressed record');

    await produceWithKcat({ brokers: cluster.bootstrapServers, topic: topics.results, partition: 1, codec: 'snappy', records: snappyRecords(id) });
    expect((await storedBatches(join(dir, 'node-1', 'data'), topics.results, 1)).map((b) => b.codec)).toEqual([CODEC_IDS.snappy]);

    // Partition 0 was read to its end, so the batch can only be on partition 1 (kafkajs's error does not say).
    const reason = `crashed: cannot read snappy-compressed records of ${topics.results} (partition 1): no snappy codec: its package failed to load (simulated: kafkajs-snappy failed to load)`;
    await eventually(async () => (await readyz()).consumer === reason, 15_000, '/readyz to name the codec and the partition');

    // The check keeps the same reason while the consumer retries (it used to turn ok at every
    // rejoin), and the process stays ready throughout.
    const seen = new Set<string>();
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      const r = await readyz();
      seen.add(`${r.status} ${r.consumer}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...seen]).toEqual([`200 ${reason}`]);
    expect(await (await fetch(`${svc.url}/metrics`)).text()).toMatch(/^rcs_consumer_state\{state="crashed"\} 1$/m);

    const errors = logs.filter((l) => l.component === 'consumer' && l.codec === 'snappy');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toMatchObject({ level: 50, topic: topics.results, partitions: [1], msg: reason.slice('crashed: '.length) });
    // Retries back off (1, 2, 4, 8 s...): a handful in these 12 s, not one a second.
    const restarts = logs.filter((l) => l.msg === 'consumer stopped; starting a new one');
    expect(restarts.length).toBeGreaterThanOrEqual(2);
    expect(restarts.length).toBeLessThanOrEqual(6);
    // Nothing of the batch was stored, and no offset of partition 1 was committed past it.
    expect((await svc.log.get(id))?.messages.length).toBe(1);
    const committed = await admin.fetchOffsets({ groupId: topics.group, topics: [topics.results] });
    expect(committed[0]?.partitions.find((p) => p.partition === 1)?.offset).toBe('-1');
  }, 60_000);

  it('recovers by itself once an operator moves the group past the batch', async () => {
    const end = (await admin.fetchTopicOffsets(topics.results)).find((p) => p.partition === 1)?.high as string;
    // Offsets can be set while the group is empty: between two retries of the consumer.
    await eventually(
      () =>
        admin.setOffsets({ groupId: topics.group, topic: topics.results, partitions: [{ partition: 1, offset: end }] }).then(
          () => true,
          () => false,
        ),
      40_000,
      'the group to be empty',
    );
    await eventually(async () => (await readyz()).consumer === 'ok', 70_000, "/readyz's consumer check to turn ok");
    const id = `after-${Date.now()}`;
    await producer.send(topics.results, [{ ...result(id, { sequence: 1 }), partition: 1 }]);
    await eventually(async () => (await svc.log.get(id))?.messages.length === 1, 15_000, 'a record after the batch');
    expect(logs.some((l) => l.msg === 'compressed batches decode again; consumer recovered')).toBe(true);
  }, 120_000);
});
