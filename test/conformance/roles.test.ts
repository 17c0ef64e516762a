/**
 * Conformance, on each broker and each Redis shape (one node, a Redis Cluster, a Sentinel set):
 * separable deployments (SERVICE_ROLE), as real processes sharing the Redis: two `api` processes
 * and one `consumer` process. The API processes are ready without any
 * consumer and never consume; the consumer stores what it reads and serves nothing but health,
 * readiness and metrics; a subscriber on either API process gets every message; a start request
 * from an API process reaches Kafka. An `api` process over in-process state refuses to start.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { runUntilExit, spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { openRedisShape, REDIS_SHAPES, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';
import { uniqueTopics } from '../support/service.js';
import { HS256_ENV } from '../support/tokens.js';

const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence final } }`;
const startTest = async (svc: ServiceProcess) =>
  (await postGraphQL(svc.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string;
const readyz = async (svc: ServiceProcess) => {
  const response = await fetch(`${svc.url}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
};
const metricsOf = async (svc: ServiceProcess) => (await fetch(`${svc.url}/metrics`)).text();

describe.each(TEST_BROKERS)('api and consumer processes on $name', (kind) => {
  // Every scenario on each Redis shape, with topics (and a consumer group) of its own.
  const topicsOf = Object.fromEntries(REDIS_SHAPES.map((shape) => [shape, uniqueTopics(`roles-${kind.name}-${shape}`)]));
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start(
      Object.values(topicsOf).flatMap((topics) => [
        { name: topics.results, partitions: 3 },
        { name: topics.requests, partitions: 1 },
      ]),
    );
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
  });

  describe.each(REDIS_SHAPES)('with Redis %s', (shapeName) => {
    const topics = topicsOf[shapeName] as ReturnType<typeof uniqueTopics>;
    const prefix = `rcs-roles-${kind.name}-${shapeName}-${process.pid}-${Date.now()}`;
    let shape: RedisShape;
    const processes: ServiceProcess[] = [];
    let api1: ServiceProcess;
    let api2: ServiceProcess;
    let consumer: ServiceProcess;

    const start = async (name: string, role: string, extra: Record<string, string> = {}): Promise<ServiceProcess> => {
      const svc = await spawnService(name, {
        SERVICE_ROLE: role,
        ...shape.env,
        REDIS_KEY_PREFIX: prefix,
        KAFKA_BROKERS: broker.bootstrapServers.join(','),
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: topics.group,
        ...broker.groupEnv,
        ...extra,
      });
      processes.push(svc);
      return svc;
    };

    beforeAll(async () => {
      shape = await openRedisShape(shapeName);
    }, 90_000);

    afterAll(async () => {
      for (const svc of processes) svc.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      if (shapeName === 'standalone') await deleteRedisKeys(`${prefix}:*`);
      await shape?.close();
    });

    it('api processes are ready with no consumer anywhere, and export no consumer series', { timeout: 90_000 }, async () => {
      [api1, api2] = await Promise.all([start('api1', 'api'), start('api2', 'api')]);
      await Promise.all([waitReady(api1), waitReady(api2)]);
      for (const api of [api1, api2]) {
        expect(await readyz(api)).toEqual({ status: 200, body: expect.objectContaining({ checks: { store: 'ok' } }) });
        const metrics = await metricsOf(api);
        expect(metrics).toMatch(/^rcs_websocket_connections 0$/m);
        expect(metrics).not.toMatch(/^rcs_(consumer_lag|consumer_joined|records_total|records_consumed_total)\b/m);
        // The requests consumer's series are the replicated mode's alone.
        expect(metrics).not.toMatch(/^rcs_request_/m);
      }
      // Started while no consumer runs: an API process alone accepts work (its consumer never joins).
      const id = await startTest(api1);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const read = await postGraphQL(api2.url, `query($id: ID!) { test(correlationId: $id) { status messageCount } }`, { id });
      expect(read.body.data?.test).toEqual({ status: 'PENDING', messageCount: 0 });
    });

    it('the consumer process is ready once it joined, and serves only health, readiness and metrics', { timeout: 90_000 }, async () => {
      // With no AUTH_* settings (the embedded issuer's mode): still no issuer routes on a consumer.
      consumer = await start('consumer', 'consumer', { AUTH_HS256_SECRET: '', AUTH_ISSUER: '', AUTH_AUDIENCE: '' });
      await waitReady(consumer);
      expect(await readyz(consumer)).toEqual({ status: 200, body: expect.objectContaining({ checks: { consumer: 'ok', store: 'ok' } }) });
      expect((await fetch(`${consumer.url}/healthz`)).status).toBe(200);
      const metrics = await metricsOf(consumer);
      expect(metrics).toMatch(/^rcs_consumer_joined 1$/m);
      expect(metrics).not.toMatch(/^rcs_(websocket_connections|subscriptions)\b/m);
      expect(metrics).not.toMatch(/^rcs_request_/m);

      expect((await postGraphQL(consumer.url, '{ __typename }')).status).toBe(404);
      expect((await fetch(`${consumer.url}/graphql?query=%7B__typename%7D`)).status).toBe(404);
      expect((await fetch(`${consumer.url}/tests`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${consumer.url}/.well-known/openid-configuration`)).status).toBe(404);
      expect((await fetch(`${consumer.url}/oauth/jwks`)).status).toBe(404);
      // No WebSocket endpoint: the upgrade is answered like any other unknown path.
      const socket = new WebSocket(`${consumer.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      const outcome = await new Promise<string>((resolve) => {
        socket.once('open', () => resolve('open'));
        socket.once('unexpected-response', (_req, res) => resolve(`status ${res.statusCode}`));
        socket.once('error', (error) => resolve(`error ${error.message}`));
      });
      socket.terminate();
      expect(outcome).toBe('status 404');
      // The API processes still consume nothing: only the consumer joined the group.
      expect(api1.output()).not.toContain('"joined consumer group"');
      expect(api2.output()).not.toContain('"joined consumer group"');
    });

    it('a subscriber on each API process receives every message the consumer stores', { timeout: 90_000 }, async () => {
      const id = await startTest(api2);
      const clients = [createWsClient(api1.url), createWsClient(api2.url)];
      const subs = clients.map((client) => collect(client, FOLLOW, { id }));
      const total = 40;
      // Half first, seen live by both; then the rest, while both are following.
      await producer.send(
        topics.results,
        Array.from({ length: total / 2 }, (_, i) => result(id, { sequence: i + 1 })),
      );
      await Promise.all(subs.map((sub) => sub.waitFor(total / 2, 30_000)));
      await producer.send(
        topics.results,
        Array.from({ length: total / 2 }, (_, i) => result(id, { sequence: total / 2 + i + 1, final: i + 1 === total / 2 })),
      );
      await Promise.all(subs.map((sub) => sub.done));
      await Promise.all(clients.map((client) => client.dispose()));
      const expected = Array.from({ length: total }, (_, k) => k + 1);
      for (const sub of subs) {
        expect(sub.results.every((r) => r.errors === undefined)).toBe(true);
        expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual(expected);
      }
      // Stored by the consumer process, not by an API process. Its counter moves once the store
      // answered, which can be after the subscribers had the final push: wait for it.
      const stored = new RegExp(`^rcs_records_total\\{outcome="stored"\\} ${total}$`, 'm');
      await eventually(async () => stored.test(await metricsOf(consumer)), 30_000, `the consumer to count ${total} stored`);
    });

    it('startTest on an API process produces the request to the requests topic', { timeout: 60_000 }, async () => {
      const ids = [await startTest(api1), await startTest(api2)];
      const kafka = new Kafka({ clientId: 'request-reader', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
      const reader = kafka.consumer({ groupId: `${topics.group}-reader`, maxWaitTimeInMs: 100 });
      const seen = new Map<string, { correlationId?: string }>();
      await reader.connect();
      try {
        await reader.subscribe({ topic: topics.requests, fromBeginning: true });
        await reader.run({
          eachMessage: async ({ message }) => void seen.set(String(message.key), JSON.parse(String(message.value)) as { correlationId?: string }),
        });
        await eventually(() => ids.every((id) => seen.has(id)), 30_000, 'both requests on the requests topic');
      } finally {
        await reader.disconnect();
      }
      for (const id of ids) expect(seen.get(id)).toMatchObject({ correlationId: id });
    });

    it('each role stops gracefully on SIGTERM', { timeout: 60_000 }, async () => {
      for (const svc of [consumer, api1, api2]) svc.kill('SIGTERM');
      expect(await Promise.all([consumer.exited, api1.exited, api2.exited])).toEqual([0, 0, 0]);
    });
  });
});

afterAll(stopRedisShapes, 60_000);

describe('a split role over in-process state', () => {
  it.each(['memory', 'replicated'])('SERVICE_ROLE=api with STATE_STORE=%s exits 78 naming both variables', { timeout: 30_000 }, async (state) => {
    const { code, output } = await runUntilExit({ ...HS256_ENV, SERVICE_ROLE: 'api', STATE_STORE: state, INSTANCE_ID: 'pod-1', PORT: '0' });
    expect(code).toBe(78);
    const line = JSON.parse(output.trim()) as { level: string; msg: string; variable: string };
    expect(line).toEqual({
      level: 'fatal',
      variable: 'SERVICE_ROLE',
      msg: `invalid configuration: SERVICE_ROLE: api needs STATE_STORE=redis, got STATE_STORE=${state}: api and consumer processes share their state through Redis (use SERVICE_ROLE=all with the ${state} state)`,
    });
  });
});
