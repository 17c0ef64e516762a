/**
 * The spans of a stored chunk, with an SDK registered in this process (an in-memory exporter): one
 * `process` span per chunk (per 128 sampled records), linked to each record whose `traceparent` is
 * sampled, with its outcome when it is not `inserted`; nothing for records whose trace is not sampled, carry no
 * `traceparent` or a malformed one; and a push span in the sampled record's own trace.
 */
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { createChunkIngest } from '../../../src/ingest/chunk-ingest.js';
import type { ConsumerStats } from '../../../src/ingest/consumer.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';
import { createSilentLogger } from '../../../src/base/logger.js';
import { createResultRecorder } from '../../../src/results/record-result.js';
import { tracePush } from '../../../src/telemetry/trace-context.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(() => void trace.setGlobalTracerProvider(provider));
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

let offset = 0;
const traceparent = (flags: '00' | '01') => `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-${flags}`;
const record = (correlationId: string, sequence: number, headers: Record<string, string>): BrokerRecord => ({
  topic: 'results',
  partition: 3,
  offset: String(offset++),
  key: null,
  value: Buffer.from(JSON.stringify({ correlationId, sequence })),
  headers,
});

function setup() {
  const log = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: 1000 });
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  return createChunkIngest({ onEvents: createResultRecorder({ log }), stats, log: createSilentLogger() });
}

describe('the spans of a stored chunk', () => {
  it('makes one process span per 128 sampled records, linked to each with its outcome, and none for the others', async () => {
    exporter.reset();
    const chunks = setup();
    const sampled = Array.from({ length: 200 }, () => traceparent('01'));
    const unsampled = traceparent('00');
    const records = [
      ...sampled.map((header, i) => record('sampled', i, { traceparent: header })),
      record('sampled', 0, { traceparent: traceparent('01') }),
      record('unsampled', 1, { traceparent: unsampled }),
      record('untraced', 1, {}),
      record('malformed', 1, { traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01` }),
    ];
    await chunks.store(chunks.decode(records));

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['process results', 'process results']);
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.attributes).toMatchObject({
        'messaging.operation.type': 'process',
        'messaging.destination.partition.id': '3',
        'messaging.batch.message_count': 204,
      });
    }
    expect(spans.map((s) => s.links.length)).toEqual([128, 73]);
    // The first span continues the first sampled record's trace; the second its first record's.
    expect(spans.map((s) => s.parentSpanContext?.spanId)).toEqual([sampled[0]?.split('-')[2], sampled[128]?.split('-')[2]]);
    const links = spans.flatMap((s) => s.links);
    expect(links.slice(0, 200).map((l) => `00-${l.context.traceId}-${l.context.spanId}-01`)).toEqual(sampled);
    // Inserted is said once per span; any other outcome on its link.
    expect(links.slice(0, 200).every((l) => l.attributes === undefined)).toBe(true);
    expect(spans.map((s) => s.attributes['store.inserted'])).toEqual([128, 72]);
    expect(links[200]?.attributes).toEqual({ 'store.outcome': 'duplicate', 'test.correlation_id': 'sampled' });
    expect(links.some((l) => l.context.traceId === unsampled.split('-')[1])).toBe(false);
    expect(spans.some((s) => s.spanContext().traceId === unsampled.split('-')[1])).toBe(false);
  });

  it('makes the push of a stored sampled message a child of its sender, linked to the chunk span; an unsampled one gets none', async () => {
    exporter.reset();
    const chunks = setup();
    const header = traceparent('01');
    await chunks.store(chunks.decode([record('pushed', 1, { traceparent: header }), record('pushed', 2, { traceparent: traceparent('00') })]));
    const [processSpan] = exporter.getFinishedSpans();

    const push = tracePush({ correlationId: 'pushed', key: 's:1' });
    expect(push).toBeDefined();
    push?.reached();
    push?.end();
    expect(tracePush({ correlationId: 'pushed', key: 's:2' })).toBeUndefined();

    const pushSpan = exporter.getFinishedSpans().find((s) => s.name === 'push');
    expect(pushSpan?.spanContext().traceId).toBe(header.split('-')[1]);
    expect(pushSpan?.parentSpanContext?.spanId).toBe(header.split('-')[2]);
    expect(pushSpan?.links.map((l) => l.context.spanId)).toEqual([processSpan?.spanContext().spanId]);
    expect(pushSpan?.attributes['push.subscribers']).toBe(1);
  });
});
