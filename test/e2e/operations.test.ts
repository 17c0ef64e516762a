/**
 * Operating the service: liveness and readiness, a broker that refuses start requests, and a
 * graceful shutdown of a real process with a live subscription.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { startTestService, uniqueTopics } from '../support/service.js';
import { HS256_ENV, authedFetch } from '../support/tokens.js';

let cluster: MockCluster;
const topics = uniqueTopics('ops');
const env = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group };

beforeAll(async () => {
  cluster = await startMockCluster({ brokers: 1, topics: [{ name: topics.results, partitions: 2 }, { name: topics.requests, partitions: 1 }] });
});

afterAll(async () => {
  await cluster?.stop();
});

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

  it('turns ready once the consumer has joined its group', async () => {
    const svc = await startTestService({ brokers: cluster.bootstrapServers, env });
    try {
      const before = await fetch(`${svc.url}/readyz`);
      expect(before.status).toBe(503);
      expect(((await before.json()) as { checks: Record<string, string> }).checks.consumer).toMatch(/^connecting|^rebalancing/);
      const after = await eventually(async () => {
        const response = await fetch(`${svc.url}/readyz`);
        return response.status === 200 && response;
      }, 30_000, 'readiness');
      expect(await after.json()).toEqual({ status: 'ready', checks: { consumer: 'ok', store: 'ok' } });
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
      wrapStore: (store: Store) => ({
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
      for (const id of created) expect(await svc.store.get(id)).toBeNull();

      await own.command('up 1');
      const ok = await eventually(async () => {
        const r = await postGraphQL(svc.url, `mutation { startTest { correlationId } }`);
        return r.body.data?.startTest?.correlationId as string | undefined;
      }, 30_000, 'the broker to accept again');
      expect(await svc.store.get(ok)).not.toBeNull();
    } finally {
      await svc.stop();
      await own.stop();
    }
  });
});

describe('graceful shutdown', () => {
  /** Runs the service as a process (`src/main.ts`) and waits until it is ready. */
  async function startProcess(extraEnv: Record<string, string> = {}) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        KAFKA_BROKERS: cluster.bootstrapServers.join(','),
        ...HS256_ENV,
        ...env,
        KAFKA_GROUP_ID: `${topics.group}-process`,
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const process_ = { child, output: '', exited: once(child, 'exit'), url: '' };
    child.stdout.on('data', (chunk: Buffer) => (process_.output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (process_.output += chunk.toString()));
    try {
      const port = await eventually(() => /"port":(\d+)/.exec(process_.output)?.[1], 30_000, 'the service to listen');
      process_.url = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${process_.url}/readyz`)).status === 200, 30_000, 'readiness');
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return process_;
  }

  it('on SIGTERM closes subscriptions with 1001, drains, commits and exits 0', async () => {
    const service = await startProcess();
    const { child, exited, url } = service;
    try {
      const start = await postGraphQL(url, `mutation { startTest { correlationId } }`);
      const id = start.body.data?.startTest.correlationId as string;

      let closed: { code: number; reason: string } | undefined;
      const client = createWsClient(url, { onClose: (event) => (closed = event) });
      const sub = collect(client, `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`, { id });
      // The subscription is live once the server has acknowledged it; a query on the same socket proves the connection is up.
      await collect(client, `{ __typename }`).done;

      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      await sub.done.catch(() => undefined);
      expect(closed?.code).toBe(1001);
      expect(service.output).toContain('"msg":"stopped"');
      await client.dispose();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('with SHUTDOWN_DELAY_MS, answers 503 on /readyz but still serves requests for the delay, then exits 0', async () => {
    const service = await startProcess({ SHUTDOWN_DELAY_MS: '2000', KAFKA_GROUP_ID: `${topics.group}-delayed` });
    const { child, exited, url } = service;
    try {
      const signalled = Date.now();
      child.kill('SIGTERM');
      await eventually(async () => (await fetch(`${url}/readyz`)).status === 503, 1500, 'readiness to turn 503');
      const query = await postGraphQL(url, `{ __typename }`);
      expect(query.status).toBe(200);
      expect(query.body.data).toEqual({ __typename: 'Query' });
      const [code] = await exited;
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(2000);
      expect(service.output).toContain('"delayMs":2000');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
