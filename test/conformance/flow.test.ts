/**
 * Conformance (a): the whole path of the product on each broker: startTest → request on Kafka → the
 * simulated external system → results on Kafka → consumer → store → query, REST and subscription.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { createSimulator, type Simulator } from '../../tools/simulator/simulator.js';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const START = `mutation Start($input: StartTestInput) { startTest(input: $input) { correlationId test { correlationId status messageCount } } }`;
const FOLLOW = `subscription Follow($id: ID!, $after: Int) { testMessages(correlationId: $id, afterSequence: $after) { id correlationId sequence final status payload } }`;
const READ = `query Read($id: ID!) { test(correlationId: $id) { correlationId status messageCount input createdAt updatedAt messages(first: 100) { totalCount nodes { sequence messageId final payload receivedAt producedAt } } } }`;

describe.each(TEST_BROKERS)('end to end on $name', (kind) => {
  const topics = uniqueTopics(`flow-${kind.name}`);
  let broker: TestBroker;
  let producer: TestProducer;
  let svc: TestService;
  let simulator: Simulator;

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 4 },
      { name: topics.requests, partitions: 2 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
    svc = await startTestService({
      brokers: broker.bootstrapServers,
      env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
    });
    simulator = createSimulator({ brokers: broker.bootstrapServers, requestsTopic: topics.requests, resultsTopic: topics.results, intervalMs: 30, steps: 5 });
    await simulator.start();
    await svc.ready();
  }, 120_000);

  afterAll(async () => {
    await simulator?.dispose();
    await svc?.stop();
    await producer?.disconnect();
    await broker?.stop();
  });

  it('startTest → simulated results → subscription, query and REST all see the same complete test', async () => {
    const started = await postGraphQL(svc.url, START, { input: { name: 'e2e', parameters: { steps: 5 } } });
    expect(started.status).toBe(200);
    const id = started.body.data?.startTest.correlationId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.body.data?.startTest.test).toEqual({ correlationId: id, status: 'PENDING', messageCount: 0 });

    const client = createWsClient(svc.url);
    const sub = collect(client, FOLLOW, { id });
    await sub.done;
    await client.dispose();

    // Simulator: steps 1..5 with deliberate duplicates and swaps, then final 6. Each exactly once.
    const pushed = sub.results.map((r) => r.data?.testMessages.sequence as number);
    expect([...pushed].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sub.results.at(-1)?.data?.testMessages).toMatchObject({ sequence: 6, final: true, status: 'COMPLETED', correlationId: id });

    const read = await postGraphQL(svc.url, READ, { id });
    const test = read.body.data?.test;
    expect(test).toMatchObject({ correlationId: id, status: 'COMPLETED', messageCount: 6, input: { name: 'e2e', parameters: { steps: 5 } } });
    expect(test.messages.totalCount).toBe(6);
    expect(test.messages.nodes.map((m: { sequence: number }) => m.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(test.messages.nodes[0].producedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const rest = await authedFetch(`${svc.url}/tests/${id}`);
    expect(rest.status).toBe(200);
    expect(rest.headers.get('cache-control')).toBe('no-store');
    const body = (await rest.json()) as { correlationId: string; status: string; messages: Array<{ sequence: number; id: string }> };
    expect(body).toMatchObject({ correlationId: id, status: 'COMPLETED' });
    expect(body.messages.map((m) => m.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(body.messages[0]?.id).toBe(`${id}/m:${id}:1`);
  });

  it('POST /tests answers 202 with Location, the record reads back at once, and the request reaches Kafka as documented', async () => {
    const response = await authedFetch(`${svc.url}/tests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'rest', parameters: { steps: 1, intervalMs: 10 } }),
    });
    expect(response.status).toBe(202);
    const { correlationId } = (await response.json()) as { correlationId: string };
    expect(response.headers.get('location')).toBe(`/tests/${correlationId}`);
    const read = await authedFetch(`${svc.url}${response.headers.get('location')}`);
    expect(read.status).toBe(200);
    const test = (await read.json()) as { status: string; createdAt: string };
    expect(test.status).toMatch(/PENDING|RUNNING|COMPLETED/);

    const kafka = new Kafka({ clientId: 'request-reader', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `reader-${correlationId}`, maxWaitTimeInMs: 100 });
    const seen: Array<{ key: string; header: string; owner: string; value: Record<string, unknown> }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic: topics.requests, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({
          key: String(message.key),
          header: String(message.headers?.correlation_id),
          owner: String(message.headers?.['rcs-owner']),
          value: JSON.parse(String(message.value)),
        });
      },
    });
    const request = await eventually(() => seen.find((r) => r.key === correlationId), 20_000, 'the request record');
    await consumer.disconnect();
    expect(request.header).toBe(correlationId);
    expect(request.value).toMatchObject({ correlationId, input: { name: 'rest', parameters: { steps: 1, intervalMs: 10 } } });
    // The value is what the external system reads, unchanged; the owner travels in a header of the service's own.
    expect(Object.keys(request.value).sort()).toEqual(['correlationId', 'input', 'requestedAt']);
    expect(request.owner).toBe('tester');
    expect(request.value.requestedAt).toBe(test.createdAt);
  });

  it('a subscriber joining mid-stream gets the stored messages, then the live tail, with no gap or duplicate', async () => {
    const id = `mid-${Date.now()}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    await producer.send(
      topics.results,
      [1, 2, 3].map((sequence) => result(id, { sequence, payload: { sequence } })),
    );
    await eventually(async () => (await svc.log.get(id))?.messages.length === 3, 15_000, 'first three stored');

    const client = createWsClient(svc.url);
    const sub = collect(client, FOLLOW, { id });
    await sub.waitFor(3);
    await producer.send(topics.results, [
      result(id, { sequence: 5 }),
      result(id, { sequence: 4 }),
      result(id, { sequence: 5 }), // redelivered
      result(id, { sequence: 2 }), // redelivered from the replayed part
      result(id, { sequence: 6, final: true, status: 'completed' }),
    ]);
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3, 5, 4, 6]);
    expect(sub.results.every((r) => r.errors === undefined)).toBe(true);
  });

  it('resumes after afterSequence, and a finished test completes after its replay', async () => {
    const id = `after-${Date.now()}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    await producer.send(
      topics.results,
      [1, 2, 3, 4].map((sequence) => result(id, { sequence, final: sequence === 4 })),
    );
    await eventually(async () => (await svc.log.get(id))?.status === 'COMPLETED', 15_000, 'test completed');
    const client = createWsClient(svc.url);
    const sub = collect(client, FOLLOW, { id, after: 2 });
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([3, 4]);
  });

  it('refuses a subscription to an unknown test with NOT_FOUND', async () => {
    const client = createWsClient(svc.url);
    const sub = collect(client, FOLLOW, { id: 'does-not-exist' });
    await sub.done;
    await client.dispose();
    // The subscribe resolver failed: one result carrying the error, then completion.
    expect(sub.results).toHaveLength(1);
    expect(sub.results[0]?.errors?.[0]).toMatchObject({ message: 'No test has the correlation id "does-not-exist".', extensions: { code: 'NOT_FOUND' } });
  });

  it('stores a result record shaped as the specification names its field (correlation_id in the value, no header)', async () => {
    const id = `spec-shaped-${kind.name}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    await producer.send(topics.results, [{ key: id, value: { correlation_id: id, sequence: 1, status: 'completed', payload: { verdict: 'pass' } } }]);
    const read = async () =>
      (await (await authedFetch(`${svc.url}/tests/${id}`)).json()) as { status: string; messages: Array<{ sequence: number; payload: unknown }> };
    await eventually(async () => (await read()).status === 'COMPLETED', 20_000, 'the spec-shaped record stored');
    expect((await read()).messages.map((m) => [m.sequence, m.payload])).toEqual([[1, { verdict: 'pass' }]]);
    expect(svc.service.broker.consumer.stats.malformed).toBe(0);
  });

  it('answers an unknown id with null over GraphQL and a 404 problem document over REST', async () => {
    const read = await postGraphQL(svc.url, READ, { id: 'nope' });
    expect(read.body).toEqual({ data: { test: null } });
    const rest = await authedFetch(`${svc.url}/tests/nope`);
    expect(rest.status).toBe(404);
    expect(rest.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await rest.json()).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'No test has the correlation id "nope".',
      instance: '/tests/nope',
      code: 'NOT_FOUND',
    });
  });

  it('refuses bad REST input with precise problem documents', async () => {
    const post = (body: string, type = 'application/json') => authedFetch(`${svc.url}/tests`, { method: 'POST', headers: { 'content-type': type }, body });
    const malformed = await post('{not json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ status: 400, code: 'BAD_USER_INPUT' });
    const unknownField = await post(JSON.stringify({ nme: 'typo' }));
    expect(unknownField.status).toBe(400);
    expect(((await unknownField.json()) as { detail: string }).detail).toContain('nme');
    const array = await post('[1,2]');
    expect(array.status).toBe(400);
    const nowhere = await fetch(`${svc.url}/nowhere`);
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
