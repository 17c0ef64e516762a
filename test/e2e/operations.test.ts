/**
 * Operating the service: liveness while the broker cannot be reached, and a broker that refuses
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
  it('is live but not ready while the broker cannot be reached', async () => {
    const svc = await startTestService({ brokers: ['127.0.0.1:1'], env: { ...env, KAFKA_GROUP_ID: `${topics.group}-unreachable` } });
    try {
      const health = await fetch(`${svc.url}/healthz`);
      expect(health.status).toBe(200);
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('not ready');
      expect(body.checks.store).toBe('ok');
      expect(body.checks.consumer).not.toBe('ok');
      // Reads are served all the same: the consumer is a background task.
      expect((await authedFetch(`${svc.url}/tests/whatever`)).status).toBe(404);
    } finally {
      await svc.stop();
    }
  });
});

describe('starting a test while the broker refuses', () => {
  it('answers BROKER_UNAVAILABLE and leaves no record behind, then recovers', async () => {
    const own = await startMockCluster({ brokers: 1, topics: [{ name: 'req', partitions: 1 }, { name: 'res', partitions: 1 }] });
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
      const ok = await eventually(async () => {
        const r = await postGraphQL(svc.url, `mutation { startTest { correlationId } }`);
        return r.body.data?.startTest?.correlationId as string | undefined;
      }, 30_000, 'the broker to accept again');
      expect(await svc.log.get(ok)).not.toBeNull();
    } finally {
      await svc.stop();
      await own.stop();
    }
  });
});
