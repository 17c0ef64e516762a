/**
 * Conformance: one small record of 12,000 tiny headers (about 100 kB), as a broken or hostile
 * producer sends it, on each broker. Unbounded, kafkajs spends 20–30 s of the event loop decoding
 * its headers on every fetch: the session expires, nothing is committed, the record is fetched
 * again forever, and a replica started on it stalls. Bounded, it is refused before its headers are
 * decoded, counted, dead-lettered without them, and committed; the results of another test behind
 * it arrive without the event loop being held, and a replica started on it does the same.
 *
 * The service runs in this process, so the event loop measured is the consumer's. The bounds are
 * far from both sides: a few seconds of the loop held against the tens the unbounded decode takes.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAD_LETTER_HEADERS } from '../../src/ingest/kafka-dead-letter.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { eventually } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

const HEADERS = 12_000;
/** Longest the event loop may be held while the hostile record is handled (unbounded: over 20 s). */
const LOOP_HELD_BOUND_MS = 3000;

/** A record of `HEADERS` distinct tiny headers for test `id`. */
function hostile(id: string) {
  const headers: Record<string, string> = {};
  for (let i = 0; i < HEADERS; i++) headers[`h${i}`] = 'v';
  return { key: id, value: { correlationId: id, sequence: 99 }, headers, partition: 0 };
}

describe.each(TEST_BROKERS)('a record of 12,000 headers on $name', (kind) => {
  const topics = uniqueTopics(`headers-${kind.name}`);
  const deadLetterTopic = `${topics.results}-dlq`;
  let broker: TestBroker;
  let producer: TestProducer;
  let log: ResultLog;
  let svc: TestService | undefined;
  let loop: IntervalHistogram;

  const start = async () => {
    const started = await startTestService({
      brokers: broker.bootstrapServers,
      log,
      env: {
        ...broker.groupEnv,
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: topics.group,
        KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
        KAFKA_COMMIT_INTERVAL_MS: '100',
      },
    });
    await started.ready();
    return started;
  };

  /** The offset committed for partition 0 of the results topic. */
  async function committed(): Promise<number> {
    const admin = await broker.admin();
    const offsets = await admin.fetchOffsets({ groupId: topics.group, topics: [topics.results] });
    return Number(offsets[0]?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
  }

  /** Sends the hostile record, then three results of a fresh test behind it on the same partition; waits for them. */
  async function resultsBehindHostileRecord(service: () => TestService | undefined): Promise<{ id: string; loopHeldMs: number }> {
    const id = `behind-${kind.name}-${Date.now()}`;
    await log.create({ correlationId: id, input: null, owner: 'tester' });
    loop.reset();
    await producer.send(topics.results, [hostile(`hostile-${id}`)]);
    await producer.send(
      topics.results,
      [1, 2, 3].map((sequence) => ({ ...result(id, { sequence, final: sequence === 3 }), partition: 0 })),
    );
    if (service() === undefined) svc = await start();
    await eventually(async () => (await log.get(id))?.messages.length === 3, 60_000, 'the results behind the hostile record');
    return { id, loopHeldMs: loop.max / 1e6 };
  }

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
      { name: deadLetterTopic, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
    log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 1000, maxMessagesPerTest: 100 });
    loop = monitorEventLoopDelay({ resolution: 20 });
    loop.enable();
  }, 120_000);

  afterAll(async () => {
    loop?.disable();
    await svc?.stop();
    await producer?.disconnect();
    await log?.dispose();
    await broker?.stop();
  });

  it(
    'is refused before its headers are decoded, counted, dead-lettered without them and committed; results behind it are not held',
    { timeout: 120_000 },
    async () => {
      svc = await start();
      const { loopHeldMs } = await resultsBehindHostileRecord(() => svc);
      expect(loopHeldMs).toBeLessThan(LOOP_HELD_BOUND_MS);
      expect(svc.service.broker.consumer.stats).toMatchObject({ malformed: 1, oversized: 1, stored: 3 });
      await eventually(() => svc?.service.broker.consumer.stats.deadLettered === 1, 20_000, 'the dead letter');
      const metrics = await (await fetch(`${svc.url}/metrics`)).text();
      expect(metrics).toMatch(/^rcs_records_total\{outcome="oversized"\} 1$/m);
      expect(metrics).toMatch(/^rcs_records_total\{outcome="malformed"\} 1$/m);
      // Past the hostile record and the three results: a restart reads none of them again.
      await eventually(async () => (await committed()) === 4, 20_000, 'the offset past the hostile record committed');

      const kafka = new Kafka({ clientId: 'dlq-reader', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
      const reader = kafka.consumer({ groupId: `dlq-reader-${topics.group}`, maxWaitTimeInMs: 100 });
      const seen: Array<{ key: string | null; value: string; headers: Record<string, string> }> = [];
      await reader.connect();
      await reader.subscribe({ topic: deadLetterTopic, fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
          seen.push({ key: message.key === null ? null : String(message.key), value: String(message.value), headers });
        },
      });
      await eventually(() => seen.length >= 1, 20_000, 'the dead letter');
      await reader.disconnect();
      // The copy is bounded: the origin and the reason, none of the 12,000 headers.
      expect(seen[0]?.headers).toEqual({
        [DEAD_LETTER_HEADERS.topic]: topics.results,
        [DEAD_LETTER_HEADERS.partition]: '0',
        [DEAD_LETTER_HEADERS.offset]: '0',
        [DEAD_LETTER_HEADERS.error]: `record has ${HEADERS} headers, more than 64`,
      });
      expect(JSON.parse(seen[0]?.value ?? 'null')).toMatchObject({ sequence: 99 });
    },
  );

  it(
    'does not stall a replica started on it: the record, not committed, is refused at startup and the results behind it arrive',
    { timeout: 180_000 },
    async () => {
      await svc?.stop();
      svc = undefined;
      // Sent while no replica runs; the group's committed offset is before it.
      const { loopHeldMs } = await resultsBehindHostileRecord(() => svc);
      expect(loopHeldMs).toBeLessThan(LOOP_HELD_BOUND_MS);
      expect((svc as TestService | undefined)?.service.broker.consumer.stats).toMatchObject({ malformed: 1, oversized: 1, stored: 3 });
      await eventually(async () => (await committed()) === 8, 20_000, 'the offset past the second hostile record committed');
    },
  );
});
