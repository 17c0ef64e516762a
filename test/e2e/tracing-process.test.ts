/**
 * Tracing as configured in a real process (`node --import tsx src/app/main.ts`): with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans of the instrumentations (http, express, graphql, kafkajs)
 * and of the service reach an OTLP/HTTP receiver (a server of this test) in one trace; without it,
 * the SDK is not loaded and the request record carries no trace context.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { uniqueTopics } from '../support/service.js';

interface ExportedSpan {
  scope: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

const topics = uniqueTopics('otlp');
let cluster: MockCluster;
let receiver: Server;
let endpoint: string;
const exported: ExportedSpan[] = [];
const requestHeaders = new Map<string, string | undefined>();
let reader: Consumer;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  // An OTLP/HTTP receiver: the JSON encoding of ExportTraceServiceRequest.
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const request = JSON.parse(body) as {
          resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }; spans: Array<Omit<ExportedSpan, 'scope'>> }> }>;
        };
        for (const resource of request.resourceSpans)
          for (const scope of resource.scopeSpans) for (const span of scope.spans) exported.push({ ...span, scope: scope.scope.name });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  reader = new Kafka({ clientId: 'request-reader', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `${topics.group}-reader`,
    maxWaitTimeInMs: 100,
  });
  await reader.connect();
  await reader.subscribe({ topic: topics.requests, fromBeginning: true });
  await reader.run({ eachMessage: async ({ message }) => void requestHeaders.set(String(message.key), message.headers?.traceparent?.toString()) });
}, 60_000);

afterAll(async () => {
  for (const service of services) {
    service.kill('SIGTERM');
    await service.exited;
  }
  await reader?.disconnect();
  await cluster?.stop();
  receiver?.close();
});

async function start(name: string, env: Record<string, string>): Promise<ServiceProcess> {
  const service = await spawnService(name, {
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: topics.results,
    KAFKA_REQUESTS_TOPIC: topics.requests,
    KAFKA_GROUP_ID: `${topics.group}-${name}`,
    ...env,
  });
  services.push(service);
  await waitReady(service);
  return service;
}

const START = `mutation { startTest(input: { name: "traced" }) { correlationId } }`;

describe('tracing in a process', () => {
  it('exports over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set: HTTP, express, GraphQL, publish and the kafkajs send in one trace', async () => {
    const service = await start('traced', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'rcs-under-test' });
    expect(service.output()).toContain('"msg":"tracing on"');
    // The loader hook is registered in-thread on Node 26: no DEP0205 (`module.register()` deprecated) at start.
    expect(service.output()).not.toContain('DeprecationWarning');
    const traceId = randomBytes(16).toString('hex');
    const started = await postGraphQL(service.url, START, undefined, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    const id = started.body.data?.startTest.correlationId as string;

    const header = await eventually(() => requestHeaders.get(id), 15_000, 'the request record');
    expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    // Spans are exported in batches as they end (the GraphQL span ends after the send it encloses):
    // wait for every expected instrumentation, then check them all.
    const expected = [
      '@opentelemetry/instrumentation-http',
      '@opentelemetry/instrumentation-express',
      '@opentelemetry/instrumentation-graphql',
      '@opentelemetry/instrumentation-kafkajs',
      'result-collection-service',
    ];
    const inTrace = () => exported.filter((span) => span.traceId === traceId);
    await eventually(() => expected.every((scope) => inTrace().some((span) => span.scope === scope)), 20_000, 'the exported spans').catch(() => undefined);
    const spans = inTrace();
    const scopes = new Set(spans.map((span) => span.scope));
    for (const scope of expected) expect(scopes).toContain(scope);
    // The kafkajs send span is under the service's publish span, and its context is the record's.
    const publish = spans.find((span) => span.name === `publish ${topics.requests}`);
    const send = spans.find((span) => span.scope === '@opentelemetry/instrumentation-kafkajs');
    expect(send?.parentSpanId).toBe(publish?.spanId);
    expect(header?.split('-')[2]).toBe(send?.spanId);
  });

  it('loads nothing of the SDK without OTEL_EXPORTER_OTLP_ENDPOINT: no trace context on the request record', async () => {
    const service = await start('untraced', {});
    expect(service.output()).not.toContain('tracing on');
    const started = await postGraphQL(service.url, START, undefined, {
      headers: { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` },
    });
    const id = started.body.data?.startTest.correlationId as string;
    await eventually(() => requestHeaders.has(id), 15_000, 'the request record');
    expect(requestHeaders.get(id)).toBeUndefined();
  });
});
