/**
 * The ingest benchmarks' records, pre-produced: ~170-byte JSON values over 1,000 tests keyed by
 * id, so each test's records stay in order in one partition. Shared by the ingest benchmark and
 * the ingest-against-partitions cost curve.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { BenchBroker } from './broker.js';

/** Produces `records` records to a fresh topic `<prefix>-<now>` of `partitions` partitions; returns its name. */
export async function produceIngestTopic(cluster: BenchBroker, prefix: string, partitions: number, records: number): Promise<string> {
  const topic = `${prefix}-${Date.now()}`;
  await cluster.createTopic(topic, partitions);
  const kafka = new Kafka({ clientId: 'bench-producer', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    for (let sent = 0; sent < records;) {
      const messages = [];
      for (let i = 0; i < 2000 && sent < records; i++, sent++) {
        const id = `bench-${String(sent % 1000).padStart(4, '0')}-0000-0000-000000000000`;
        messages.push({
          key: id,
          value: JSON.stringify({
            correlationId: id,
            sequence: Math.floor(sent / 1000),
            status: 'running',
            payload: { step: sent, progress: 0.5, note: 'x'.repeat(24) },
          }),
        });
      }
      await producer.send({ topic, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return topic;
}
