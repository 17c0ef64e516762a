/**
 * The benchmark's common-stack peer keeps working: on a mock cluster, with real connections, its
 * memory variant answers `startTest` and `test`, refuses a request without a token and one deeper
 * than its depth limit, stores and pushes a consumed record once when it comes twice, and only to
 * the subscription of its own test.
 */
import { createClient } from 'graphql-ws';
import { Kafka, Partitioners, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BENCH_AUTH_ENV, benchToken } from '../../bench/lib/token.js';
import { startPeer, type RunningPeer } from '../../bench/peers/common-stack/server.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually } from '../support/graphql.js';

const topic = `peer-results-${process.pid}`;
let cluster: MockCluster;
let peer: RunningPeer;
let producer: Producer;
let token: string;

const post = async (query: string, variables: Record<string, unknown> = {}, auth = true) => {
  const response = await fetch(`${peer.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, any>; errors?: Array<{ message: string }> } };
};

describe('the common-stack peer (memory variant)', () => {
  beforeAll(async () => {
    cluster = await startMockCluster({
      brokers: 1,
      topics: [
        { name: topic, partitions: 1 },
        { name: 'test-requests', partitions: 1 },
      ],
    });
    peer = await startPeer({
      brokers: cluster.bootstrapServers,
      resultsTopic: topic,
      requestsTopic: 'test-requests',
      groupId: `peer-${process.pid}`,
      variant: 'memory',
      auth: { issuer: BENCH_AUTH_ENV.AUTH_ISSUER, audience: BENCH_AUTH_ENV.AUTH_AUDIENCE, hs256Secret: BENCH_AUTH_ENV.AUTH_HS256_SECRET },
      fetchMaxWaitMs: 10,
      fromBeginning: true,
      maxDepth: 3,
    });
    producer = new Kafka({ clientId: 'peer-test', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).producer({
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    token = await benchToken();
    await eventually(async () => (await fetch(`${peer.url}/readyz`)).status === 200, 30_000, 'the peer to join its group');
  });

  afterAll(async () => {
    await producer?.disconnect();
    await peer?.stop();
    await cluster?.stop();
  });

  it('refuses a request without a token, and one deeper than its depth limit', async () => {
    expect((await post('{ tests(correlationIds: []) { correlationId } }', {}, false)).status).toBe(401);
    // The subset's deepest operation fits the service's limit of 10; this peer has a limit of 3.
    expect((await post('{ test(correlationId: "x") { messages { nodes { sequence } } } }')).body).toEqual({ data: { test: null } });
    const deep = await post('mutation { startTest { test { messages { nodes { sequence } } } } }');
    expect(deep.body.errors?.[0]?.message).toMatch(/exceeds maximum operation depth of 3/);
  });

  it('pushes a consumed record once to the subscription of its test, and stores it once', async () => {
    const started = await post('mutation { startTest(input: { name: "peer" }) { correlationId test { status } } }');
    const id = started.body.data?.startTest.correlationId as string;
    expect(started.body.data?.startTest.test.status).toBe('PENDING');
    const client = createClient({
      url: `${peer.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    const pushed: number[] = [];
    const other: number[] = [];
    const follow = (correlationId: string, into: number[]) =>
      client.subscribe<{ testMessages: { sequence: number } }>(
        { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id: correlationId } },
        { next: (r) => void into.push(r.data?.testMessages.sequence as number), error: () => undefined, complete: () => undefined },
      );
    follow(id, pushed);
    follow('another-test', other);
    await new Promise<void>((resolve, reject) => client.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve }));
    const record = (sequence: number) => ({ key: id, value: JSON.stringify({ correlationId: id, sequence, status: 'running', payload: { sequence } }) });
    await producer.send({ topic, messages: [record(1), record(2), record(2), record(3)] });
    await eventually(() => pushed.length >= 3, 20_000, 'three pushes');
    await new Promise((r) => setTimeout(r, 300));
    await client.dispose();
    expect(pushed).toEqual([1, 2, 3]);
    expect(other).toEqual([]);
    const read = await post(
      'query($id: ID!) { test(correlationId: $id) { status messageCount messages(first: 2) { nodes { sequence payload } pageInfo { hasNextPage endCursor } totalCount } } }',
      { id },
    );
    expect(read.body.data?.test).toEqual({
      status: 'RUNNING',
      messageCount: 3,
      messages: {
        nodes: [
          { sequence: 1, payload: { sequence: 1 } },
          { sequence: 2, payload: { sequence: 2 } },
        ],
        pageInfo: { hasNextPage: true, endCursor: '1' },
        totalCount: 3,
      },
    });
  });
});
