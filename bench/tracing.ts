/**
 * The cost of tracing: the same pre-produced topic of records that carry a `traceparent` (as results
 * of traced requests do) consumed into the memory store by the service's consumer with tracing off
 * and with tracing on (the SDK and its instrumentations, the service's one `process` span per stored
 * chunk linked to its sampled records, and OTLP export to a receiver in this process that counts the
 * spans), in turn, `rounds` times each; and, with tracing on, the same records without a
 * `traceparent` (what tracing costs a record that brings no sampled trace), with every new trace
 * sampled and with 1 in 100. Targets: ≥ 0.7× tracing off with every record sampled, ≥ 0.95× at a
 * sampler ratio of 0.01.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../src/ingest/kafkajs-queue-timer.js';
import '../src/ingest/kafkajs-stopped-fetch.js';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Row } from './ingest.js';
import type { BenchBroker } from './lib/broker.js';
import { median } from './lib/median.js';
import { runWorker } from './lib/worker.js';

/** Runs the comparison over `records` records in 12 partitions, the median of `rounds` runs each. */
export async function benchTracing(cluster: BenchBroker, records: number, rounds = 1): Promise<Row[]> {
  const topic = `bench-tracing-${Date.now()}`;
  await cluster.createTopic(topic, 12);
  const kafka = new Kafka({ clientId: 'bench-producer', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  // The ingest benchmark's records, each with a sampled trace context of its own.
  const plain = `${topic}-plain`;
  await cluster.createTopic(plain, 12);
  for (let sent = 0; sent < records;) {
    const messages = [];
    for (let i = 0; i < 2000 && sent < records; i++, sent++) {
      const id = `bench-${String(sent % 1000).padStart(4, '0')}-0000-0000-000000000000`;
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      messages.push({
        key: id,
        headers: { correlation_id: id, traceparent },
        value: JSON.stringify({
          correlationId: id,
          sequence: Math.floor(sent / 1000),
          status: 'running',
          payload: { step: sent, progress: 0.5, note: 'x'.repeat(24) },
        }),
      });
    }
    await producer.send({ topic, messages });
    await producer.send({
      topic: plain,
      messages: messages.map(({ headers, ...message }) => ({ ...message, headers: { correlation_id: headers.correlation_id } })),
    });
  }
  await producer.disconnect();

  // An OTLP/HTTP receiver that counts the spans it is sent (not their links, whose ids look alike).
  let spans = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: unknown[] }> }> };
      for (const resource of request.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

  const brokers = cluster.bootstrapServers.join(',');
  type Variant = 'on' | 'plain' | 'sampled';
  const rates: Record<'off' | Variant, number[]> = { off: [], on: [], plain: [], sampled: [] };
  const spansPerRecord: Record<Variant, number[]> = { on: [], plain: [], sampled: [] };
  const traced = async (variant: Variant, from: string, ratio: number) => {
    const before = spans;
    const { rate } = await runWorker<{ rate: number }>('traced', [endpoint, String(ratio), 'ingest', 'memory', brokers, from, String(records)]);
    rates[variant].push(rate);
    spansPerRecord[variant].push((spans - before) / records);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      rates.off.push((await runWorker<{ rate: number }>('ingest', ['memory', brokers, topic, String(records)])).rate);
      await traced('on', topic, 1);
      await traced('plain', plain, 1);
      await traced('sampled', plain, 0.01);
    }
  } finally {
    receiver.close();
  }
  const off = median(rates.off);
  console.error(`tracing ingest rates (records/s): ${JSON.stringify(rates)}; spans per record: ${JSON.stringify(spansPerRecord)}`);
  const row = (variant: Variant, text: string, target?: number): Row => ({
    benchmark: 'tracing',
    variant: `${text}, ${median(spansPerRecord[variant]).toFixed(3)} spans/record exported`,
    value: median(rates[variant]),
    unit: 'records/s',
    ratio: median(rates[variant]) / off,
    ...(target === undefined ? {} : { target: `≥ ${target}×`, met: median(rates[variant]) / off >= target }),
  });
  return [
    { benchmark: 'tracing', variant: `ingest, traceparent on records, tracing off, median of ${rounds}`, value: off, unit: 'records/s' },
    row('on', 'the same, tracing on (every record sampled)', 0.7),
    row('plain', 'no traceparent, tracing on'),
    row('sampled', 'no traceparent, tracing on, sampler ratio 0.01', 0.95),
  ];
}
