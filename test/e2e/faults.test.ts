/**
 * Faults of the broker and of Redis: reads keep being served, readiness says honestly what is
 * wrong, nothing is acknowledged that was not stored, and after recovery every result is stored
 * exactly once. The recovery times are printed.
 *
 * A broker fault keeps the process ready (200: it serves its API from the store) with the
 * consumer's state in the body and the metrics; a store fault makes it unready (503). Neither
 * makes it unhealthy: `/healthz` stays 200, since both are waited out, not cured by a restart.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';
import { loadConfig } from '../../src/config/config.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';

const topics = uniqueTopics('faults');
let cluster: MockCluster;
let producer: TestProducer;
const started: TestService[] = [];
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const env = (extra: Record<string, string> = {}) => ({
  KAFKA_RESULTS_TOPIC: topics.results,
  KAFKA_REQUESTS_TOPIC: topics.requests,
  KAFKA_SESSION_TIMEOUT_MS: '6000',
  KAFKA_FETCH_MAX_WAIT_MS: '100',
  ...extra,
});

async function service(group: string, extra: Record<string, string> = {}, state?: ConfiguredResultLog): Promise<TestService> {
  const svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: env({ KAFKA_GROUP_ID: `${topics.group}-${group}`, ...extra }),
    ...(state ? { log: state.log } : {}),
  });
  started.push(svc);
  await svc.ready();
  return svc;
}

const sequences = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const stored = async (svc: TestService, id: string) => (await svc.log.get(id))?.messages.map((m) => m.sequence) ?? [];
const readiness = async (svc: TestService) => {
  const response = await fetch(`${svc.url}/readyz`);
  return { status: response.status, checks: ((await response.json()) as { checks: Record<string, string> }).checks };
};
const health = async (svc: TestService) => (await fetch(`${svc.url}/healthz`)).status;
const metricsText = async (svc: TestService) => (await fetch(`${svc.url}/metrics`)).text();

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 3 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  producer = await createTestProducer(cluster.bootstrapServers);
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await producer?.disconnect();
  await cluster?.stop();
});

describe('broker faults', () => {
  it(
    'keeps serving reads with the broker down, stays ready (200) with the consumer state in /readyz and the metrics, and stores everything once after it returns',
    { timeout: 120_000 },
    async () => {
      const svc = await service('down');
      const id = `down-${Date.now()}`;
      await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
      await producer.send(
        topics.results,
        sequences(1, 20).map((sequence) => result(id, { sequence })),
      );
      await eventually(async () => (await stored(svc, id)).length === 20, 20_000, 'first batch');

      await cluster.command('down 1');
      const down = Date.now();
      // Every answer of /readyz while the broker is away is a 200: the consumer's state is reported, not routed on.
      const answers: Array<{ status: number; consumer: string | undefined }> = [];
      const degraded = await eventually(
        async () => {
          const r = await readiness(svc);
          answers.push({ status: r.status, consumer: r.checks.consumer });
          return r.checks.consumer !== 'ok' && r;
        },
        30_000,
        'the consumer check to drop',
      );
      expect(degraded.checks.consumer).toMatch(/^(stalled|crashed|rebalancing|connecting)/);
      expect(degraded.checks.store).toBe('ok');
      expect(await metricsText(svc)).toMatch(/^rcs_consumer_state\{state="joined"\} 0$/m);
      expect(await health(svc)).toBe(200);
      const read = await authedFetch(`${svc.url}/tests/${id}`);
      expect(read.status).toBe(200);
      expect(((await read.json()) as { messageCount: number }).messageCount).toBe(20);

      const detected = Date.now();
      await cluster.command('up 1');
      const up = Date.now();
      await producer.send(
        topics.results,
        [...sequences(21, 40), ...sequences(15, 20)].map((sequence) => result(id, { sequence })),
      );
      await eventually(
        async () => {
          const r = await readiness(svc);
          answers.push({ status: r.status, consumer: r.checks.consumer });
          return r.checks.consumer === 'ok';
        },
        60_000,
        'the consumer to rejoin',
      );
      const ready = Date.now();
      await eventually(async () => (await stored(svc, id)).length === 40, 60_000, 'second batch');
      const caughtUp = Date.now();
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(await metricsText(svc)).toMatch(/^rcs_consumer_state\{state="joined"\} 1$/m);
      console.log(
        `broker down: consumer check dropped after ${seconds(detected - down)} (/readyz 200 throughout); back up: consumer in its group after ${seconds(ready - up)}, all records stored after ${seconds(caughtUp - up)}`,
      );
      expect(await stored(svc, id)).toEqual(sequences(1, 40));
    },
  );

  it('rides out injected Fetch, OffsetCommit and Heartbeat errors, storing each record once', { timeout: 120_000 }, async () => {
    const svc = await service('errors', { KAFKA_COMMIT_INTERVAL_MS: '0' });
    const id = `errors-${Date.now()}`;
    await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    // 6 NOT_LEADER_OR_FOLLOWER, 16 NOT_COORDINATOR, 27 REBALANCE_IN_PROGRESS.
    await cluster.command('error Fetch 6 6 6 6');
    await cluster.command('error OffsetCommit 16 16 16');
    await cluster.command('error Heartbeat 27 27');
    const began = Date.now();
    for (const part of [sequences(1, 10), sequences(11, 20), sequences(21, 30)]) {
      await producer.send(
        topics.results,
        part.map((sequence) => result(id, { sequence })),
      );
    }
    await eventually(async () => (await stored(svc, id)).length === 30, 60_000, 'all records');
    await eventually(async () => (await readiness(svc)).checks.consumer === 'ok', 60_000, 'the consumer in its group');
    console.log(`injected broker errors: all 30 records stored ${seconds(Date.now() - began)} after the first was produced`);
    expect(await stored(svc, id)).toEqual(sequences(1, 30));
  });
});

describe('Redis outage', () => {
  let redis: PrivateRedis;
  let state: ConfiguredResultLog;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'outage' }), createSilentLogger());
  });
  afterAll(async () => {
    await state?.dispose();
    await redis?.stop();
  });

  it(
    'answers 503 on /readyz (200 on /healthz) while Redis is down, acknowledges nothing it did not store, and catches up when Redis returns',
    { timeout: 120_000 },
    async () => {
      const svc = await service('redis', { STATE_STORE: 'redis', REDIS_URL: redis.url }, state);
      const id = `outage-${Date.now()}`;
      await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
      await producer.send(
        topics.results,
        sequences(1, 10).map((sequence) => result(id, { sequence })),
      );
      await eventually(async () => (await stored(svc, id)).length === 10, 20_000, 'first batch');

      await redis.kill();
      const down = Date.now();
      const rest = await authedFetch(`${svc.url}/tests/${id}`);
      expect(rest.status).toBe(503);
      expect(await rest.json()).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
      const graphql = await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { status } }`, { id });
      expect(graphql.body.errors?.[0]?.extensions?.code).toBe('STORE_UNAVAILABLE');
      const unready = await readiness(svc);
      expect(unready.status).toBe(503);
      expect(unready.checks.store).toMatch(/^unavailable/);
      expect(await metricsText(svc)).toMatch(/^rcs_store_up 0$/m);
      // Not a reason to restart the process: it resumes by itself once Redis returns.
      expect(await health(svc)).toBe(200);

      const { stats } = svc.service.broker.consumer;
      const storedBefore = stats.stored;
      const consumedBefore = stats.consumed;
      await producer.send(
        topics.results,
        sequences(11, 20).map((sequence) => result(id, { sequence })),
      );
      // The consumer has them in hand, and holds them: nothing is stored or skipped.
      await eventually(() => stats.consumed > consumedBefore, 20_000, 'the consumer to fetch the new records');
      expect(stats.stored).toBe(storedBefore);

      await redis.restart();
      const up = Date.now();
      await eventually(async () => (await readiness(svc)).status === 200, 30_000, 'readiness to return');
      await eventually(async () => (await stored(svc, id).catch(() => [])).length === 20, 30_000, 'the held records');
      console.log(`redis outage of ${seconds(up - down)}: up→all stored ${seconds(Date.now() - up)}`);
      expect(await stored(svc, id)).toEqual(sequences(1, 20));
    },
  );
});

describe('a connection of the service to Redis down, Redis up', () => {
  const password = 'faults-password';
  let redis: PrivateRedis;
  let admin: Redis;
  let state: ConfiguredResultLog;
  beforeAll(async () => {
    redis = await startPrivateRedis({ password });
    admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'sub-down' }), createSilentLogger());
  });
  afterAll(async () => {
    await state?.dispose();
    admin?.disconnect();
    await redis?.stop();
  });

  it('answers 503 on /readyz (200 on /healthz) while the subscriber connection cannot reconnect, and 200 once it has', { timeout: 60_000 }, async () => {
    const svc = await service('sub-down', { STATE_STORE: 'redis', REDIS_URL: redis.url }, state);
    // New connections cannot authenticate; the ones open stay open.
    await admin.config('SET', 'requirepass', `${password}-changed`);
    try {
      const subscriber = String(await admin.client('LIST'))
        .split('\n')
        .find((line) => line.includes(' name=rcs-subscriber '));
      await admin.client('KILL', 'ID', /(?:^| )id=(\d+)/.exec(subscriber ?? '')?.[1] ?? '0');
      const unready = await eventually(
        async () => {
          const now = await readiness(svc);
          return now.status === 503 && now;
        },
        10_000,
        '/readyz to answer 503',
      );
      expect(unready.checks.store).toMatch(/^unavailable/);
      expect(await health(svc)).toBe(200);
      // Reads are served meanwhile: only live updates depend on the subscriber connection.
      expect((await authedFetch(`${svc.url}/tests/none-${Date.now()}`)).status).toBe(404);
    } finally {
      await admin.config('SET', 'requirepass', password);
    }
    await eventually(async () => (await readiness(svc)).status === 200, 30_000, '/readyz to answer 200 again');
  });
});
