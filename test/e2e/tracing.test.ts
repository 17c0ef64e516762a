/**
 * One trace from `startTest` to the message pushed to a subscriber: the OpenTelemetry SDK runs in
 * this process with an in-memory exporter (started before the service's modules are loaded, as
 * main.ts does), a client calls `startTest` over HTTP with a `traceparent`, the request record on
 * the mock broker carries the trace context, the simulator (the external system) sends its results
 * back with it, and a graphql-ws subscriber receives them. Over the memory and the Redis result log
 * (whose follower reads stored messages back from Redis before they are pushed).
 */
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry, type Telemetry } from '../../src/telemetry/start-telemetry.js';

const exporter = new InMemorySpanExporter();
let telemetry: Telemetry;
// Loaded after the SDK (see beforeAll): the instrumentations see only modules loaded after them.
let service: typeof import('../support/service.js');
let graphql: typeof import('../support/graphql.js');
let cluster: import('../../tools/mock-cluster/mock-cluster.js').MockCluster;

const START = `mutation($input: StartTestInput) { startTest(input: $input) { correlationId } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence final } }`;

beforeAll(async () => {
  telemetry = await startTelemetry({ serviceName: 'result-collection-service', spanExporter: exporter, sampleRatio: 1 });
  service = await import('../support/service.js');
  graphql = await import('../support/graphql.js');
  const { startMockCluster } = await import('../../tools/mock-cluster/mock-cluster.js');
  cluster = await startMockCluster({ brokers: 1, topics: [] });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await telemetry?.shutdown();
});

/** A service on a result log of `kind`, with topics of its own, the simulator, and a reader of its request records. */
function setup(kind: 'memory' | 'redis') {
  const env: { svc?: import('../support/service.js').TestService; requests: string[]; stop: Array<() => Promise<void>> } = { requests: [], stop: [] };
  beforeAll(async () => {
    const topics = service.uniqueTopics(`tracing-${kind}`);
    await cluster.createTopic(topics.results, 1);
    await cluster.createTopic(topics.requests, 1);
    const settings = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group };
    let log;
    if (kind === 'redis') {
      const { loadConfig } = await import('../../src/config/config.js');
      const { createResultLogFromConfig } = await import('../../src/app/result-log-from-config.js');
      const { createSilentLogger } = await import('../../src/base/logger.js');
      const prefix = `tracing-${topics.group}`;
      const state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: prefix }), createSilentLogger());
      const { deleteRedisKeys } = await import('../support/redis-keys.js');
      env.stop.push(async () => {
        await state.dispose();
        await deleteRedisKeys(`${prefix}:*`);
      });
      log = state.log;
    }
    env.svc = await service.startTestService({ brokers: cluster.bootstrapServers, env: settings, ...(log ? { log } : {}) });
    env.stop.unshift(() => env.svc!.stop());
    // The request records as the broker has them, headers included.
    const { Kafka, logLevel } = await import('kafkajs');
    const reader = new Kafka({ clientId: 'request-reader', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).consumer({
      groupId: `${topics.group}-reader`,
      maxWaitTimeInMs: 100,
    });
    await reader.connect();
    await reader.subscribe({ topic: topics.requests, fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void env.requests.push(String(message.headers?.traceparent)) });
    env.stop.unshift(() => reader.disconnect());
    const { createSimulator } = await import('../../tools/simulator/simulator.js');
    const simulator = createSimulator({
      brokers: cluster.bootstrapServers,
      requestsTopic: topics.requests,
      resultsTopic: topics.results,
      groupId: `${topics.group}-simulator`,
      intervalMs: 200,
      steps: 2,
      duplicateEvery: 0,
      swapEvery: 0,
    });
    await simulator.start();
    env.stop.unshift(() => simulator.dispose());
    await env.svc.ready();
  }, 120_000);
  afterAll(async () => {
    for (const stop of env.stop) await stop();
  });
  return env;
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The chain of ancestors of `span` among `spans`, nearest first. */
function ancestors(span: ReadableSpan, spans: readonly ReadableSpan[]): ReadableSpan[] {
  const chain: ReadableSpan[] = [];
  for (
    let parent = spans.find((s) => s.spanContext().spanId === parentOf(span));
    parent !== undefined;
    parent = spans.find((s) => s.spanContext().spanId === parentOf(parent!))
  )
    chain.push(parent);
  return chain;
}

describe.each(['memory', 'redis'] as const)('tracing through Kafka, %s result log', (kind) => {
  const env = setup(kind);

  it('startTest, the request produced, the results consumed and stored, and the messages pushed are one trace', async () => {
    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const started = await graphql.postGraphQL(
      env.svc!.url,
      START,
      { input: { name: 'traced', parameters: { steps: 2, intervalMs: 200 } } },
      { headers: { traceparent: `00-${traceId}-${clientSpanId}-01` } },
    );
    const id = started.body.data?.startTest.correlationId as string;
    expect(id).toBeDefined();

    const client = graphql.createWsClient(env.svc!.url);
    const sub = graphql.collect(client, FOLLOW, { id });
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages)).toEqual([
      { sequence: 1, final: false },
      { sequence: 2, final: false },
      { sequence: 3, final: true },
    ]);

    // The request record carries the trace context of the call that produced it.
    const header = await graphql.eventually(() => env.requests.find((h) => h.startsWith(`00-${traceId}-`)), 10_000, 'the request record');
    expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const spans = await graphql.eventually(
      () => {
        const inTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
        return inTrace.filter((s) => s.name === 'push').length >= 3 ? inTrace : undefined;
      },
      10_000,
      'three push spans',
    );

    // The HTTP server span continues the client's trace; startTest's publish span is under it.
    const server = spans.find((s) => s.kind === SpanKind.SERVER && parentOf(s) === clientSpanId);
    expect(server?.attributes['http.route'] ?? server?.name).toBeDefined();
    const publish = spans.find((s) => s.name.startsWith('publish '));
    expect(publish?.kind).toBe(SpanKind.PRODUCER);
    expect(ancestors(publish!, spans)).toContain(server);
    // The record's traceparent names the span that sent it: publish, or the kafkajs send span under it.
    const sender = spans.find((s) => s.spanContext().spanId === header.split('-')[2]);
    expect(sender === publish || ancestors(sender!, spans).includes(publish!)).toBe(true);

    // Each result: the `process` span of the chunk that stored it, linked to the record's sender
    // (an outcome other than `inserted` would be on the link); and a push in the record's own trace
    // (a child of its sender), linked to that span.
    const sentBy = header.split('-')[2];
    const processes = exporter.getFinishedSpans().filter((s) => s.name.startsWith('process '));
    const links = processes.flatMap((span) => span.links.filter((link) => link.context.traceId === traceId).map((link) => ({ span, link })));
    expect(links).toHaveLength(3);
    const pushes = spans.filter((s) => s.name === 'push' && s.attributes['test.correlation_id'] === id);
    expect(pushes).toHaveLength(3);
    for (const { span, link } of links) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(link.context.spanId).toBe(sentBy);
      expect(link.attributes).toBeUndefined();
      expect(span.attributes['store.inserted']).toBeGreaterThanOrEqual(1);
      expect(span.attributes['messaging.batch.message_count']).toBeGreaterThanOrEqual(1);
    }
    for (const push of pushes) {
      expect(parentOf(push)).toBe(sentBy);
      expect(push.attributes['push.subscribers']).toBe(1);
      expect(links.map(({ span }) => span.spanContext().spanId)).toContain(push.links[0]?.context.spanId);
    }
  });

  it('records without a traceparent get no spans of ours, and their messages are pushed as usual', async () => {
    const producer = await (await import('../support/kafka.js')).createTestProducer(cluster.bootstrapServers);
    const id = `untraced-${Date.now()}`;
    await env.svc!.log.create({ correlationId: id, input: null, owner: 'tester' });
    const client = graphql.createWsClient(env.svc!.url);
    const sub = graphql.collect(client, FOLLOW, { id });
    const { result } = await import('../support/kafka.js');
    await producer.send(env.svc!.config.kafka.resultsTopic, [result(id, { sequence: 0, final: true })]);
    await sub.done;
    await client.dispose();
    await producer.disconnect();
    expect(sub.results).toHaveLength(1);
    expect(exporter.getFinishedSpans().filter((s) => s.attributes['test.correlation_id'] === id)).toEqual([]);
  });

  it('records whose trace is not sampled get no spans and no links, and their messages are pushed as usual', async () => {
    const producer = await (await import('../support/kafka.js')).createTestProducer(cluster.bootstrapServers);
    const id = `unsampled-${Date.now()}`;
    const traceId = randomBytes(16).toString('hex');
    await env.svc!.log.create({ correlationId: id, input: null, owner: 'tester' });
    const client = graphql.createWsClient(env.svc!.url);
    const sub = graphql.collect(client, FOLLOW, { id });
    const { result } = await import('../support/kafka.js');
    const record = result(id, { sequence: 0, final: true });
    await producer.send(env.svc!.config.kafka.resultsTopic, [
      { ...record, headers: { ...record.headers, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` } },
    ]);
    await sub.done;
    await client.dispose();
    await producer.disconnect();
    expect(sub.results).toHaveLength(1);
    const finished = exporter.getFinishedSpans();
    expect(finished.filter((s) => s.spanContext().traceId === traceId || s.attributes['test.correlation_id'] === id)).toEqual([]);
    expect(finished.flatMap((s) => s.links).filter((link) => link.context.traceId === traceId)).toEqual([]);
  });
});
