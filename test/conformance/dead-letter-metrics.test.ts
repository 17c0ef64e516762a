/**
 * Conformance (c): on each broker, poison records go to the dead-letter topic with their origin and
 * the reason, then are committed, and the partition goes on; /metrics reports what the consumer
 * did, its lag, connections and request latency.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAD_LETTER_HEADERS } from '../../src/ingest/kafka-dead-letter.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const metricValue = (text: string, line: RegExp) => Number(line.exec(text)?.[1] ?? Number.NaN);

describe.each(TEST_BROKERS)('on $name', (kind) => {
  const topics = uniqueTopics(`dlq-${kind.name}`);
  const deadLetterTopic = `${topics.results}-dlq`;
  let broker: TestBroker;
  let producer: TestProducer;
  let svc: TestService;

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 2 },
      { name: topics.requests, partitions: 1 },
      { name: deadLetterTopic, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
    svc = await startTestService({
      brokers: broker.bootstrapServers,
      env: {
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: topics.group,
        KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
      },
    });
    await svc.ready();
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await producer?.disconnect();
    await broker?.stop();
  });

  describe('dead-letter topic', () => {
    it('copies each poison record with its origin and reason, then goes on with the partition', async () => {
      const id = `dlq-${Date.now()}`;
      await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
      await producer.send(topics.results, [
        { partition: 1, key: 'k1', value: 'not json', headers: { trace: 'abc' } },
        { partition: 1, value: { correlationId: id, sequence: -5 } },
        { ...result(id, { sequence: 1 }), partition: 1 },
      ]);
      await eventually(async () => (await svc.log.get(id))?.messages.length === 1, 15_000, 'the good record');

      const kafka = new Kafka({ clientId: 'dlq-reader', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
      const consumer = kafka.consumer({ groupId: `dlq-reader-${id}`, maxWaitTimeInMs: 100 });
      const seen: Array<{ key: string | null; value: string; headers: Record<string, string> }> = [];
      await consumer.connect();
      await consumer.subscribe({ topic: deadLetterTopic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
          seen.push({ key: message.key === null ? null : String(message.key), value: String(message.value), headers });
        },
      });
      await eventually(() => seen.length >= 2, 20_000, 'two dead letters');
      await consumer.disconnect();

      expect(seen[0]).toMatchObject({
        key: 'k1',
        value: 'not json',
        headers: {
          trace: 'abc',
          [DEAD_LETTER_HEADERS.topic]: topics.results,
          [DEAD_LETTER_HEADERS.partition]: '1',
          [DEAD_LETTER_HEADERS.offset]: '0',
          [DEAD_LETTER_HEADERS.error]: 'value is not JSON',
        },
      });
      expect(seen[1]?.headers[DEAD_LETTER_HEADERS.offset]).toBe('1');
      expect(seen[1]?.headers[DEAD_LETTER_HEADERS.error]).toContain('sequence');
      expect(svc.service.broker.consumer.stats.deadLettered).toBe(2);
    });
  });

  describe('/metrics', () => {
    it('reports record outcomes, lag, connections, subscriptions and request latency, without ids in labels', async () => {
      const id = `metrics-${Date.now()}`;
      await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
      await authedFetch(`${svc.url}/tests/${id}`);
      const client = createWsClient(svc.url);
      const sub = collect(client, `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`, { id });
      await collect(client, '{ __typename }').done;

      const response = await fetch(`${svc.url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const text = await response.text();
      sub.unsubscribe();
      await client.dispose();

      expect(metricValue(text, /^rcs_records_total\{outcome="dead_lettered"\} (\d+)$/m)).toBe(2);
      expect(metricValue(text, /^rcs_records_total\{outcome="malformed"\} (\d+)$/m)).toBe(2);
      expect(metricValue(text, /^rcs_records_total\{outcome="stored"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
      expect(metricValue(text, /^rcs_records_consumed_total (\d+)$/m)).toBeGreaterThanOrEqual(3);
      expect(text).toMatch(new RegExp(`^rcs_consumer_lag\\{topic="${topics.results}",partition="1"\\} 0$`, 'm'));
      expect(metricValue(text, /^rcs_consumer_joined (\d+)$/m)).toBe(1);
      expect(metricValue(text, /^rcs_websocket_connections (\d+)$/m)).toBe(1);
      expect(metricValue(text, /^rcs_subscriptions (\d+)$/m)).toBe(1);
      expect(metricValue(text, /^rcs_store_tests (\d+)$/m)).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/^rcs_http_request_duration_seconds_count\{method="GET",route="\/tests\/:correlationId",status="200"\} \d+$/m);
      expect(text).toMatch(/^rcs_process_resident_memory_bytes \d+/m);
      // The per-stage delays: a histogram per stage, one observation per stored chunk, the stored
      // delay never below the fetched one's bucket (a record is fetched before it is stored).
      expect(text).toMatch(/^# TYPE rcs_ingest_delay_seconds histogram$/m);
      const chunks = metricValue(text, /^rcs_ingest_delay_seconds_count\{stage="stored"\} (\d+)$/m);
      expect(chunks).toBeGreaterThanOrEqual(1);
      expect(metricValue(text, /^rcs_ingest_delay_seconds_count\{stage="fetched"\} (\d+)$/m)).toBe(chunks);
      expect(metricValue(text, /^rcs_ingest_delay_seconds_bucket\{stage="stored",le="\+Inf"\} (\d+)$/m)).toBe(chunks);
      expect(metricValue(text, /^rcs_ingest_delay_seconds_sum\{stage="stored"\} ([\d.e-]+)$/m)).toBeGreaterThanOrEqual(
        metricValue(text, /^rcs_ingest_delay_seconds_sum\{stage="fetched"\} ([\d.e-]+)$/m),
      );
      expect(text).not.toContain(id);
    });
  });
});
