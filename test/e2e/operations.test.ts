/**
 * Operating the service: liveness and readiness while the broker cannot be reached (by role), liveness
 * after the event loop was blocked, and a broker that refuses
 * start requests (injected on the mock cluster). Readiness once joined and graceful shutdown run on
 * both brokers in test/conformance/shutdown.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { startMockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { startTestService, uniqueTopics } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const topics = uniqueTopics('ops');
const env = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group };

describe('health and readiness', () => {
  it('is live and ready while the broker cannot be reached, with the consumer check saying why', async () => {
    const svc = await startTestService({ brokers: ['127.0.0.1:1'], env: { ...env, KAFKA_GROUP_ID: `${topics.group}-unreachable` } });
    try {
      const health = await fetch(`${svc.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', checks: { eventLoop: 'ok', consumer: 'ok' } });
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('ready');
      expect(body.checks.store).toBe('ok');
      expect(body.checks.consumer).not.toBe('ok');
      // Reads are served all the same: the consumer is a background task.
      expect((await authedFetch(`${svc.url}/tests/whatever`)).status).toBe(404);
      const metrics = await (await fetch(`${svc.url}/metrics`)).text();
      expect(metrics).toMatch(/^rcs_consumer_state\{state="joined"\} 0$/m);
      expect(metrics).toMatch(/^rcs_consumer_seconds_since_fetch \d/m);
    } finally {
      await svc.stop();
    }
  });

  it('a consumer-only process is not ready until its consumer has joined', async () => {
    const svc = await startTestService({
      brokers: ['127.0.0.1:1'],
      env: { ...env, KAFKA_GROUP_ID: `${topics.group}-consumer-role`, SERVICE_ROLE: 'consumer', STATE_STORE: 'redis' },
    });
    try {
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks.consumer).not.toBe('ok');
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });

  it('in the replicated mode, is not ready until both consumers have joined once and rebuilt the state', async () => {
    const svc = await startTestService({
      brokers: ['127.0.0.1:1'],
      env: { ...env, KAFKA_GROUP_ID: `${topics.group}-replicated`, STATE_STORE: 'replicated', INSTANCE_ID: 'ops-replicated' },
    });
    try {
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { checks: Record<string, string> };
      expect(body.checks).toMatchObject({ store: 'ok', replay: 'waiting for both consumers to join once and rebuild the state' });
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });

  it('fails liveness after the event loop was blocked past its bound, and recovers once it runs freely again', async () => {
    const svc = await startTestService({
      brokers: ['127.0.0.1:1'],
      env: { ...env, KAFKA_GROUP_ID: `${topics.group}-blocked`, HEALTH_MAX_EVENT_LOOP_DELAY_MS: '300' },
    });
    try {
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
      // The service runs in this process: blocking this thread blocks its event loop.
      const until = Date.now() + 1000;
      while (Date.now() < until) {
        // busy: nothing else runs meanwhile
      }
      const blocked = await fetch(`${svc.url}/healthz`);
      expect(blocked.status).toBe(503);
      const body = (await blocked.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('unhealthy');
      expect(body.checks.eventLoop).toMatch(/^event loop blocked for \d+ ms within the last 10 s \(bound 300 ms\)$/);
      // Readiness does not follow: the process answers, and liveness decides whether to restart it.
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
      await eventually(async () => (await fetch(`${svc.url}/healthz`)).status === 200, 30_000, 'liveness to return once the block is out of the window');
    } finally {
      await svc.stop();
    }
  });
});

describe('starting a test while the broker refuses', () => {
  it('answers BROKER_UNAVAILABLE and leaves no record behind, then recovers', async () => {
    const own = await startMockCluster({
      brokers: 1,
      topics: [
        { name: 'req', partitions: 1 },
        { name: 'res', partitions: 1 },
      ],
    });
    const created: string[] = [];
    const svc = await startTestService({
      brokers: own.bootstrapServers,
      env: { KAFKA_RESULTS_TOPIC: 'res', KAFKA_REQUESTS_TOPIC: 'req', KAFKA_GROUP_ID: 'refusal', KAFKA_PRODUCE_TIMEOUT_MS: '1500' },
      wrapLog: (store: ResultLog) => ({
        ...store,
        create: (test) => {
          created.push(test.correlationId);
          return store.create(test);
        },
      }),
    });
    try {
      await own.command('down 1');
      const started = Date.now();
      const response = await postGraphQL(svc.url, `mutation { startTest(input: { name: "x" }) { correlationId } }`);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(response.body.data).toBeNull();
      expect(response.body.errors?.[0]?.extensions?.code).toBe('BROKER_UNAVAILABLE');
      const rest = await authedFetch(`${svc.url}/tests`, { method: 'POST' });
      expect(rest.status).toBe(503);
      expect(await rest.json()).toMatchObject({ status: 503, code: 'BROKER_UNAVAILABLE' });
      expect(created).toHaveLength(2);
      for (const id of created) expect(await svc.log.get(id)).toBeNull();

      await own.command('up 1');
      const ok = await eventually(
        async () => {
          const r = await postGraphQL(svc.url, `mutation { startTest { correlationId } }`);
          return r.body.data?.startTest?.correlationId as string | undefined;
        },
        30_000,
        'the broker to accept again',
      );
      expect(await svc.log.get(ok)).not.toBeNull();
    } finally {
      await svc.stop();
      await own.stop();
    }
  });
});
