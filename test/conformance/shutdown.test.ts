/**
 * Conformance (f), on each broker: readiness is 200 while the consumer joins, and its check turns
 * ok once it has joined; SIGTERM closes
 * subscriptions with 1001, drains, commits what was processed and leaves the group (the committed
 * offsets equal the end offsets once the process has exited 0, and the remaining member takes its
 * partitions over at once rather than after a session timeout).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { metric, spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { startTestService, uniqueTopics } from '../support/service.js';
import { HS256_ENV } from '../support/tokens.js';

describe.each(TEST_BROKERS)('on $name', (kind) => {
  const topics = uniqueTopics(`ops-${kind.name}`);
  const env = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group };
  const leave = uniqueTopics(`leave-${kind.name}`);
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: 2 },
      { name: topics.requests, partitions: 1 },
      { name: leave.results, partitions: 6 },
      { name: leave.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
  });

  describe('health and readiness', () => {
    it('is ready while its consumer joins (it serves its API from the store), and the consumer check turns ok once it joined', async () => {
      const svc = await startTestService({ brokers: broker.bootstrapServers, env });
      try {
        const before = await fetch(`${svc.url}/readyz`);
        expect(before.status).toBe(200);
        expect(((await before.json()) as { checks: Record<string, string> }).checks.consumer).toMatch(/^connecting|^rebalancing|^ok$/);
        const after = await eventually(
          async () => {
            const response = await fetch(`${svc.url}/readyz`);
            const body = (await response.json()) as { status: string; checks: Record<string, string> };
            return body.checks.consumer === 'ok' && { status: response.status, body };
          },
          30_000,
          'the consumer to join',
        );
        expect(after).toEqual({ status: 200, body: { status: 'ready', checks: { consumer: 'ok', store: 'ok' } } });
      } finally {
        await svc.stop();
      }
    });
  });

  describe('graceful shutdown', () => {
    /** Runs the service as a process (`src/app/main.ts`) and waits until it is ready. */
    async function startProcess(extraEnv: Record<string, string> = {}) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          KAFKA_BROKERS: broker.bootstrapServers.join(','),
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
        // Ready, and its consumer in its group: what it commits at SIGTERM is what this file checks.
        await eventually(
          async () => {
            const response = await fetch(`${process_.url}/readyz`);
            return response.status === 200 && ((await response.json()) as { checks: Record<string, string> }).checks.consumer === 'ok';
          },
          30_000,
          'readiness',
        );
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

  describe('SIGTERM with another member in the group', () => {
    const processes: ServiceProcess[] = [];
    // On the mock a session long enough that leaving (a rebalance after its fixed wait) and expiring
    // (a session timeout, then that wait) are told apart by time; on Kafka the default 30 s.
    const sessionEnv: Record<string, string> = kind.name === 'kafka' ? {} : { KAFKA_SESSION_TIMEOUT_MS: '10000' };
    const sessionMs = Number(sessionEnv.KAFKA_SESSION_TIMEOUT_MS ?? 30_000);
    const start = async (name: string, extra: Record<string, string> = {}) => {
      const svc = await spawnService(name, {
        KAFKA_BROKERS: broker.bootstrapServers.join(','),
        KAFKA_RESULTS_TOPIC: leave.results,
        KAFKA_REQUESTS_TOPIC: leave.requests,
        KAFKA_GROUP_ID: leave.group,
        ...broker.groupEnv,
        ...sessionEnv,
        INSTANCE_ID: name,
        ...extra,
      });
      processes.push(svc);
      return svc;
    };

    afterAll(async () => {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
    });

    it('commits up to the end offsets, exits 0 and leaves: the other member takes over at once', { timeout: 180_000 }, async () => {
      // The leaving member commits only at rebalances and at stop (its interval is 10 minutes).
      const [leaving, staying] = await Promise.all([start('leaving', { KAFKA_COMMIT_INTERVAL_MS: '600000' }), start('staying')]);
      await Promise.all([leaving, staying].map((p) => waitReady(p)));
      await eventually(
        () => leaving.assignment().length === 3 && staying.assignment().length === 3 && new Set([...leaving.assignment(), ...staying.assignment()]).size === 6,
        60_000,
        'three partitions each',
      );
      const owned = leaving.assignment();

      // Results on every partition (memory store: each process stores what it consumes).
      const id = `leave-${Date.now()}`;
      await producer.send(
        leave.results,
        [0, 1, 2, 3, 4, 5].flatMap((partition) => [1, 2, 3].map((k) => ({ ...result(id, { sequence: partition * 3 + k }), partition }))),
      );
      const storedBy = (p: ServiceProcess) => metric(p, /^rcs_records_total\{outcome="stored"\} (\d+)$/m);
      await eventually(async () => (await storedBy(leaving)) === 9 && (await storedBy(staying)) === 9, 30_000, 'every record stored');

      leaving.kill('SIGTERM');
      expect(await leaving.exited).toBe(0);
      const exitedAt = Date.now();
      const admin = await broker.admin();
      const ends = await admin.fetchTopicOffsets(leave.results);
      const committed = (await admin.fetchOffsets({ groupId: leave.group, topics: [leave.results] }))[0]?.partitions ?? [];
      for (const partition of owned) {
        expect(committed.find((c) => c.partition === partition)?.offset, `committed offset of partition ${partition}`).toBe(
          ends.find((e) => e.partition === partition)?.high,
        );
      }
      expect(ends.every((e) => e.high === '3')).toBe(true);

      // It left the group: the staying member is assigned everything well before a session timeout
      // (plus the broker's own rebalance wait) could have expired the leaving member.
      await eventually(
        () => staying.assignment().length === 6,
        broker.rebalanceDelayMs(sessionMs) + sessionMs * 2,
        'the staying member to take every partition',
      );
      const takeoverMs = Date.now() - exitedAt;
      console.info(`[${kind.name}] takeover after a graceful leave: ${takeoverMs} ms (session ${sessionMs} ms)`);
      expect(takeoverMs).toBeLessThan(broker.rebalanceDelayMs(sessionMs) + sessionMs / 2);
      if (kind.name === 'kafka') {
        // Kafka describes groups (the mock cannot): one member left, the staying one.
        const { groups } = await admin.describeGroups([leave.group]);
        expect(groups[0]?.state).toBe('Stable');
        expect(groups[0]?.members).toHaveLength(1);
      }

      // Nothing was redelivered: the staying member (a memory store of its own, so a redelivered
      // record would be stored again) reads the taken-over partitions from their end, so records
      // sent now are the only new ones, and no older one is read before them.
      await producer.send(
        leave.results,
        owned.map((partition) => ({ ...result(id, { sequence: 100 + partition }), partition })),
      );
      const stored = await eventually(
        async () => {
          const n = await storedBy(staying);
          return n >= 9 + owned.length && n;
        },
        30_000,
        'the new records on the taken-over partitions',
      );
      expect(stored).toBe(9 + owned.length);
    });
  });
});
