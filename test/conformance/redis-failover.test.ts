/**
 * Faults of the shared Redis under a steady stream, on a Redis Cluster (3 primaries, 3 replicas)
 * and on a Sentinel set (a primary, a replica, 3 sentinels): two service replicas in one consumer
 * group share it (REDIS_WAIT_REPLICAS=1, as deployed with replicas), a graphql-ws subscriber
 * follows every test on one replica and a graphql-sse subscriber on the other.
 *
 * 1. The primary that holds a followed test's slot is killed (SIGKILL) mid-stream; the cluster (or
 *    Sentinel) promotes its replica, and the killed node is started again (as a managed service
 *    replaces a node) and rejoins as the new primary's replica.
 * 2. The primary of a followed test is paused (SIGSTOP) past the client's command timeout and the
 *    failover timeout, then resumed: it comes back as a replica.
 *
 * Every produced result is stored once and pushed once to both subscribers; `/readyz` says the
 * store is down while a primary is missing (readiness asks every primary on a cluster) and is 200
 * again once the failover is over; the recovery times are printed. On the mock broker: the faults
 * are Redis's, and the consumer's handling of a failed write (no commit, the batch again) is the
 * same on both brokers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import type { RedisNode } from '../../tools/redis/redis-cluster.js';
import { MOCK_BROKER, type TestBroker } from '../support/brokers.js';
import { eventually } from '../support/graphql.js';
import { recentLogLines, type RecentLogLines } from '../support/recent-log-lines.js';
import { openRedisShape, stopRedisShapes, type RedisShape } from '../support/redis-shapes.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { sampleReadiness, startSteadyStream, subscribeAll, type Produced, type Pushes, type ReadinessSample } from '../support/steady-stream.js';

const PARTITIONS = 3;
const TESTS = 6;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

afterAll(stopRedisShapes, 60_000);

describe.each(['cluster', 'sentinel'] as const)('two replicas on a Redis %s losing a primary under a steady stream', (shapeName) => {
  const topics = uniqueTopics(`redis-failover-${shapeName}`);
  const prefix = `rcs-failover-${shapeName}-${process.pid}`;
  let shape: RedisShape;
  let broker: TestBroker;
  const states: ConfiguredResultLog[] = [];
  const replicas: TestService[] = [];
  /** Each replica's last warnings, for a failure's message. */
  const logs: RecentLogLines[] = [];

  beforeAll(async () => {
    shape = await openRedisShape(shapeName);
    broker = await MOCK_BROKER.start([
      { name: topics.results, partitions: PARTITIONS },
      { name: topics.requests, partitions: 1 },
    ]);
    const env = {
      ...shape.env,
      REDIS_KEY_PREFIX: prefix,
      REDIS_WAIT_REPLICAS: '1',
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: topics.group,
      ...broker.groupEnv,
    };
    for (let i = 0; i < 2; i++) {
      const log = recentLogLines('warn');
      logs.push(log);
      const state = createResultLogFromConfig(loadConfig(env), log.logger);
      states.push(state);
      replicas.push(await startTestService({ brokers: broker.bootstrapServers, env, log: state.log, logger: log.logger }));
    }
    await Promise.all(replicas.map((r) => r.ready()));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all(states.map((s) => s.dispose()));
    await broker?.stop();
    await shape?.close();
  }, 60_000);

  /** The primary that holds `id`'s keys now. */
  const primaryOf = async (id: string): Promise<RedisNode> =>
    shape.cluster ? shape.cluster.primaryOf(`${prefix}:{${id}}:meta`) : (shape.sentinel as NonNullable<RedisShape['sentinel']>).primary();
  const waitHealthy = () => (shape.cluster ?? (shape.sentinel as NonNullable<RedisShape['sentinel']>)).waitHealthy(60_000);

  it('stores and pushes every result once through a kill -9 and a pause of a primary, with honest readiness', { timeout: 300_000 }, async () => {
    const [a, b] = replicas as [TestService, TestService];
    const ids = Array.from({ length: TESTS }, (_, i) => `failover-${shapeName}-${i}-${Date.now()}`);
    for (const id of ids) await a.log.create({ correlationId: id, input: null, owner: 'tester' });
    const subscribers: Array<[string, Pushes]> = [
      ['graphql-ws on replica A', await subscribeAll(a.url, ids, 'ws')],
      ['graphql-sse on replica B', await subscribeAll(b.url, ids, 'sse')],
    ];
    const readiness = [sampleReadiness(a.url, 200), sampleReadiness(b.url, 200)];
    const stream = await startSteadyStream({
      brokers: broker.bootstrapServers,
      topic: topics.results,
      ids,
      partitions: PARTITIONS,
      tickMs: 100,
      idempotent: false,
    });
    // Read anew at every poll: the samplers keep adding to their arrays.
    const samplesSoFar = () => readiness.flatMap((r) => r.samples).sort((x, y) => x.at - y.at);
    const pushedEverywhere = (r: Produced) => subscribers.every(([, p]) => p.received.has(`${r.id}/${r.sequence}`));
    /** What is missing where, for a failure's message. */
    const diagnose = async () => {
      const due = stream.produced.filter((r) => r.ackedAt !== undefined && r.ackedAt < Date.now() - 1000);
      const parts = await Promise.all(
        subscribers.map(async ([name, p]) => {
          const missing = due.filter((r) => !p.received.has(`${r.id}/${r.sequence}`));
          const stored = await Promise.all(missing.slice(0, 3).map(async (r) => (await a.log.get(r.id))?.messages.some((m) => m.sequence === r.sequence)));
          return `${name}: ${missing.length} missing, first ${JSON.stringify(missing.slice(0, 3).map((r) => `${r.id}/${r.sequence}`))} stored ${JSON.stringify(stored)}, ended ${JSON.stringify(p.ended)}`;
        }),
      );
      const consumers = JSON.stringify(replicas.map((r) => [r.service.broker.consumer.state(), r.service.broker.consumer.stats]));
      const lines = logs.map((log, i) => `replica ${'AB'[i]}'s last warnings:\n${log.lines().slice(-30).join('\n')}`);
      return `${parts.join('; ')}; consumers ${consumers}\n${lines.join('\n')}`;
    };
    await eventually(() => subscribers.every(([, p]) => p.received.size >= TESTS * 10), 60_000, 'the stream to flow to both subscribers');

    // 1. kill -9 the primary of a followed test; the replica is promoted; the node comes back.
    const victim = await primaryOf(ids[0] as string);
    const killedAt = Date.now();
    await victim.kill();
    const promoted = await eventually(
      async () => {
        const now = await primaryOf(ids[0] as string).catch(() => undefined);
        return now !== undefined && now.port !== victim.port && Date.now();
      },
      60_000,
      'the replica to be promoted',
    );
    await victim.restart();
    await waitHealthy();
    const killed = await recovery('kill -9', killedAt, stream.produced, pushedEverywhere, samplesSoFar, diagnose);
    console.log(`Redis ${shapeName}, kill -9 of the primary: replica promoted after ${seconds(promoted - killedAt)}; ${killed}`);

    // 2. Pause (SIGSTOP) the primary of a followed test past the command timeout (3 s: 2 s and
    // the 1 s of REDIS_WAIT_TIMEOUT_MS) and the failover timeout, then resume it.
    const paused = await primaryOf(ids[1] as string);
    const pausedAt = Date.now();
    paused.pause();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    paused.resume();
    await waitHealthy();
    const pause = await recovery('pause', pausedAt, stream.produced, pushedEverywhere, samplesSoFar, diagnose);
    console.log(`Redis ${shapeName}, primary paused for 5 s: ${pause}`);

    await stream.stop();
    await eventually(() => stream.produced.every(pushedEverywhere), 120_000, 'every record pushed to both subscribers');
    await Promise.all(readiness.map((r) => r.stop()));

    // Stored once: each test holds its sequences 1..n without gap or copy, read on either replica.
    const last = stream.produced.at(-1)?.sequence ?? 0;
    const expected = Array.from({ length: last }, (_, i) => i + 1);
    for (const id of ids) for (const replica of replicas) expect((await replica.log.get(id))?.messages.map((m) => m.sequence)).toEqual(expected);
    // Pushed once, to each subscriber, and no subscription ended.
    for (const [name, pushes] of subscribers) {
      expect(
        [...pushes.received].filter(([, times]) => times.length !== 1),
        name,
      ).toEqual([]);
      expect(pushes.received.size, name).toBe(stream.produced.length);
      expect(pushes.ended, name).toEqual([]);
      await pushes.dispose();
    }
    // The consumers handled every record: a write whose answer the failover cut off was stored by
    // Redis, and its retry counts as a duplicate (the store above holds it once).
    // A chunk is counted once its store answered, which can be after its push.
    const handled = () => replicas.reduce((sum, r) => sum + r.service.broker.consumer.stats.stored + r.service.broker.consumer.stats.duplicates, 0);
    await eventually(() => handled() >= stream.produced.length, 30_000, 'every record counted').catch(() => undefined);
    expect(handled()).toBeGreaterThanOrEqual(stream.produced.length);
  });
});

/**
 * Waits until a record produced after `faultAt` reached both subscribers and readiness is 200
 * again on both replicas, checks that readiness said the store was down meanwhile, and describes
 * the recovery.
 */
async function recovery(
  name: string,
  faultAt: number,
  produced: readonly Produced[],
  pushed: (r: Produced) => boolean,
  samplesSoFar: () => readonly ReadinessSample[],
  diagnose: () => Promise<string>,
): Promise<string> {
  const firstNew = await eventually(
    () => produced.some((r) => r.sentAt >= faultAt + 500 && pushed(r)) && Date.now(),
    60_000,
    `${name}: a record produced after the fault to reach both subscribers`,
  ).catch(async (error: unknown) => {
    throw new Error(`${String(error)}: ${await diagnose()}`);
  });
  // Ready again: at least 4 answers in a row of 200 since the last that was not, which follows the
  // fault. Answers given after the fault count, whenever asked: during a pause the first check
  // waits on the hung primary about 6 s before it fails (auto-pipelining sends its PING once the
  // commands before it have timed out) and is often its sampler's only 503; when it was asked a
  // moment before the pause (both samplers ask in step), its date fell before the fault, and the
  // outage went unseen.
  const readyAgain = await eventually(
    () => {
      const after = samplesSoFar().filter((s) => s.answeredAt >= faultAt);
      const since = after.slice(after.map((s) => s.status !== 200).lastIndexOf(true) + 1);
      return since.length < after.length && since.length >= 4 && (since[0] as ReadinessSample).at;
    },
    60_000,
    `${name}: /readyz to show the outage and be 200 again`,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; the last answers: ${JSON.stringify(samplesSoFar().slice(-4))}`);
  });
  const down = samplesSoFar().filter((s) => s.answeredAt >= faultAt && s.at < readyAgain && s.status !== 200);
  expect(down.length, `${name}: /readyz shows the outage`).toBeGreaterThan(0);
  for (const sample of down) expect(sample.checks.store, JSON.stringify(sample)).not.toBe('ok');
  const caughtUp = await eventually(
    () => {
      const now = Date.now();
      const due = produced.filter((r) => r.ackedAt !== undefined && r.ackedAt < now - 1000);
      return due.every(pushed) && now;
    },
    60_000,
    `${name}: the backlog to reach both subscribers`,
  ).catch(async (error: unknown) => {
    throw new Error(`${String(error)}: ${await diagnose()}`);
  });
  return `store reported down in ${down.length} readiness samples, ready again after ${seconds(readyAgain - faultAt)}, first new record pushed after ${seconds(firstNew - faultAt)}, all caught up after ${seconds(caughtUp - faultAt)}`;
}
