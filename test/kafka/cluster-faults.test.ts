/**
 * Faults of a real three-node Kafka cluster (replication factor 3, min.insync.replicas 2) under a
 * steady stream of results: the leader of the results partitions is killed (SIGKILL) mid-stream,
 * then the group coordinator, and each comes back. Every acknowledged result is stored once and
 * pushed once to a live subscriber, `/readyz` stays 200 and its consumer check honest, and the
 * recovery times are printed.
 * `startTest` while the requests topic's leader is down either fails with BROKER_UNAVAILABLE or
 * succeeds, and every success is on the requests topic (at least once: never lost).
 *
 * The service runs in-process (test/support/service.ts): the faults are the broker's, the service
 * process stays up, and in-process it can be observed directly (consumer state, store) besides
 * HTTP and graphql-ws, which are still used for every assertion a client could make.
 *
 * Readiness, as asserted here: the process serves its API from the store throughout, so `/readyz`
 * answers 200 throughout (a load balancer keeps it in rotation), and its consumer check is honest:
 * - a check other than `ok` names the consumer's state (connecting, rebalancing, stalled,
 *   crashed) and, when stalled or crashed, the broker error; the store's check stays `ok`;
 * - `ok` is never given while a result has been waiting longer than the session timeout (plus a
 *   5 s margin) and is still not stored 5 s after that answer: a consumer that makes no progress
 *   for that long is not in its group as far as operators are told, and one that says it is in
 *   again delivers its backlog at once;
 * - the coordinator's kill shows: the check leaves `ok` for a while, and
 *   `rcs_consumer_state_changes_total` counts the consumer's rejoin;
 * - once the fault is over (the node back, the consumer in its group again), it stays `ok`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { readFile } from 'node:fs/promises';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { fullyReplicated } from '../support/kafka-cluster.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { sampleReadiness, startSteadyStream, subscribeAll, type Produced, type Pushes, type ReadinessSample } from '../support/steady-stream.js';

const topics = uniqueTopics('cluster');
const PARTITIONS = 3;
const TESTS = 6;
const SESSION_TIMEOUT_MS = 30_000; // the service's default, which this test does not change
let cluster: KafkaCluster;
let svc: TestService;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

beforeAll(async () => {
  cluster = await startKafka({
    nodes: 3,
    topics: [
      { name: topics.results, partitions: PARTITIONS },
      { name: topics.requests, partitions: 1 },
    ],
  });
  svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
  });
  await svc.ready();
}, 180_000);

afterAll(async () => {
  await svc?.stop();
  await cluster?.stop();
}, 60_000);

/** A fault: kill a node, measure how the stream recovers, start it again. */
async function fault(name: string, victim: number, stream: { produced: readonly Produced[] }, pushes: Pushes, affected: (r: Produced) => boolean) {
  const killedAt = Date.now();
  await cluster.killNode(victim);
  try {
    return { killedAt, caughtUp: await recovery(name, victim, killedAt, stream, pushes, affected) };
  } finally {
    // Back even when the recovery failed, so that what follows runs on a whole cluster.
    await cluster.startNode(victim);
    await fullyReplicated(cluster, [topics.results, topics.requests]);
  }
}

async function recovery(
  name: string,
  victim: number,
  killedAt: number,
  stream: { produced: readonly Produced[] },
  pushes: Pushes,
  affected: (r: Produced) => boolean,
): Promise<number> {
  const pushedAt = (r: Produced) => pushes.received.get(`${r.id}/${r.sequence}`)?.[0];
  // First record produced after the kill (on the partitions the fault touched) that was stored and pushed.
  const firstNew = await eventually(
    () => {
      const times = stream.produced
        .filter((r) => r.sentAt >= killedAt && affected(r))
        .map(pushedAt)
        .filter((t): t is number => t !== undefined);
      return times.length > 0 && Math.min(...times);
    },
    180_000,
    `${name}: a record produced after the kill to be pushed`,
  );
  // Caught up: every record acknowledged more than a second ago has been pushed.
  const caughtUp = await eventually(
    () => {
      const now = Date.now();
      const due = stream.produced.filter((r) => r.ackedAt !== undefined && r.ackedAt < now - 1000);
      return due.length > 0 && due.every((r) => pushedAt(r) !== undefined) && now;
    },
    180_000,
    `${name}: the backlog to be pushed`,
  ).catch(async (error: unknown) => {
    const missing = stream.produced.filter((r) => r.ackedAt !== undefined && pushedAt(r) === undefined);
    const stored = await Promise.all(missing.slice(0, 5).map(async (r) => (await svc.log.get(r.id))?.messages.some((m) => m.sequence === r.sequence)));
    const consumer = svc.service.broker.consumer;
    throw new Error(
      `${String(error)}; ${missing.length} acknowledged records not pushed, on partitions ${[...new Set(missing.map((r) => r.partition))].join(',')}, first ${JSON.stringify(missing.slice(0, 5))}, stored: ${JSON.stringify(stored)}; consumer ${JSON.stringify(consumer.state())}, lag ${JSON.stringify(consumer.lag())}, stats ${JSON.stringify(consumer.stats)}`,
    );
  });
  const longest = Math.max(
    ...stream.produced.filter((r) => r.sentAt >= killedAt - 2000 && r.sentAt < caughtUp).map((r) => (pushedAt(r) ?? caughtUp) - r.sentAt),
  );
  console.log(
    `${name} (node ${victim}) killed: first new record stored after ${seconds(firstNew - killedAt)}, all caught up after ${seconds(caughtUp - killedAt)}, longest wait of a record ${seconds(longest)}`,
  );
  return caughtUp;
}

/** Checks the readiness samples against what the stream saw (see the file's comment). */
function checkReadiness(
  samples: readonly ReadinessSample[],
  produced: readonly Produced[],
  pushes: Pushes,
  faults: ReadonlyArray<{ killedAt: number; settled: number; until: number; shows: boolean }>,
) {
  expect(samples.filter((s) => s.status !== 200)).toEqual([]);
  const degraded = samples.filter((s) => s.checks.consumer !== 'ok');
  for (const s of degraded) {
    expect(s.checks.store, JSON.stringify(s)).toBe('ok');
    expect(s.checks.consumer, JSON.stringify(s)).toMatch(/^(connecting|rebalancing|stalled: no answer from the broker|crashed: .+)/);
  }
  const pushedAt = (r: Produced) => pushes.received.get(`${r.id}/${r.sequence}`)?.[0] ?? Number.POSITIVE_INFINITY;
  for (const s of samples.filter((x) => x.checks.consumer === 'ok')) {
    const starving = produced.find((r) => r.ackedAt !== undefined && r.ackedAt < s.at - SESSION_TIMEOUT_MS - 5000 && pushedAt(r) > s.at + 5000);
    expect(
      starving,
      `consumer ok at ${new Date(s.at).toISOString()} while a result acknowledged at ${new Date(starving?.ackedAt ?? 0).toISOString()} was not stored`,
    ).toBeUndefined();
  }
  for (const { killedAt, settled, until, shows } of faults) {
    if (shows) expect(degraded.filter((s) => s.answeredAt >= killedAt && s.at < settled).length, 'the consumer check shows the fault').toBeGreaterThan(0);
    const after = samples.filter((s) => s.at >= settled && s.at < until);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((s) => s.checks.consumer !== 'ok')).toEqual([]);
  }
  const summary =
    degraded.length === 0
      ? 'consumer ok throughout'
      : `consumer not ok in ${degraded.length} of ${samples.length} samples (${[...new Set(degraded.map((s) => s.checks.consumer))].join('; ')})`;
  console.log(`/readyz during the faults: 200 in every sample; ${summary}`);
}

/** How many times the consumer joined its group, as `/metrics` says. */
async function joins(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^rcs_consumer_state_changes_total\{state="joined"\} (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

describe('a three-node cluster losing nodes under a steady stream', () => {
  it(
    'stores and pushes every result once through a leader and a coordinator kill, ready throughout with an honest consumer check',
    { timeout: 900_000 },
    async () => {
      const ids = Array.from({ length: TESTS }, (_, i) => `cluster-${i}-${Date.now()}`);
      for (const id of ids) await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
      const pushes = await subscribeAll(svc.url, ids);
      const readiness = sampleReadiness(svc.url, 250);
      const stream = await startSteadyStream({ brokers: cluster.bootstrapServers, topic: topics.results, ids, partitions: PARTITIONS, tickMs: 100 });
      await eventually(() => pushes.received.size >= TESTS * 10, 60_000, 'the stream to flow');

      // The coordinator helper must name the node that really coordinates the group: its log holds the group's joins.
      const coordinator = await cluster.coordinatorOf(topics.group);
      const logs = await Promise.all(
        cluster.nodes.map(async (n) => ({ id: n.id, mentions: (await readFile(n.logFile, 'utf8')).includes(`group ${topics.group}`) })),
      );
      expect(logs.filter((l) => l.mentions).map((l) => l.id)).toEqual([coordinator]);

      const joinsBefore = await joins(svc.url);
      const leader = await cluster.leaderOf(topics.results, 0);
      const ledByLeader = new Set<number>();
      for (let p = 0; p < PARTITIONS; p++) if ((await cluster.leaderOf(topics.results, p)) === leader) ledByLeader.add(p);
      const first = await fault('leader of the results partitions', leader, stream, pushes, (r) => ledByLeader.has(r.partition));
      // The next fault strikes a settled consumer (after the records flow again, kafkajs may still
      // crash on a heartbeat to the dead node and rejoin: the consumer check says so meanwhile).
      const settled = async () => {
        await eventually(
          async () => {
            const response = await fetch(`${svc.url}/readyz`);
            return ((await response.json()) as { checks: Record<string, string> }).checks.consumer === 'ok';
          },
          120_000,
          'the consumer check after the fault',
        );
        return Date.now();
      };
      const firstSettled = await settled();
      const joinsBetween = await joins(svc.url);
      await new Promise((resolve) => setTimeout(resolve, 5000));

      const second = await fault('group coordinator', await cluster.coordinatorOf(topics.group), stream, pushes, () => true);
      const secondSettled = await settled();
      // The metric counts the rejoin after the coordinator's death (the leader's may need none).
      expect(joinsBetween).toBeGreaterThanOrEqual(joinsBefore);
      expect(await joins(svc.url)).toBeGreaterThan(joinsBetween);
      await new Promise((resolve) => setTimeout(resolve, 5000));
      await stream.stop();
      const end = Date.now();
      await eventually(() => stream.produced.every((r) => pushes.received.has(`${r.id}/${r.sequence}`)), 120_000, 'every record pushed');
      await readiness.stop();

      // Stored once, pushed once: the store holds each test's sequences 1..n without gap or copy,
      // and the subscriber got each exactly once.
      const last = stream.produced.at(-1)?.sequence ?? 0;
      const expected = Array.from({ length: last }, (_, i) => i + 1);
      for (const id of ids) expect((await svc.log.get(id))?.messages.map((m) => m.sequence)).toEqual(expected);
      const twice = [...pushes.received].filter(([, times]) => times.length !== 1);
      expect(twice).toEqual([]);
      expect(pushes.received.size).toBe(stream.produced.length);
      expect(pushes.ended).toEqual([]);
      checkReadiness(readiness.samples, stream.produced, pushes, [
        // A dead leader may cost the consumer no rejoin at all (its fetches move to the new leader);
        // a dead coordinator always takes it out of its group for a while.
        { killedAt: first.killedAt, settled: firstSettled, until: second.killedAt, shows: false },
        { killedAt: second.killedAt, settled: secondSettled, until: end, shows: true },
      ]);
      console.log(`consumer check ok again ${seconds(firstSettled - first.killedAt)} and ${seconds(secondSettled - second.killedAt)} after the kills`);
      await pushes.dispose();
    },
  );

  it('a second replica joining and leaving gracefully loses and duplicates nothing', { timeout: 300_000 }, async () => {
    const ids = Array.from({ length: TESTS }, (_, i) => `scale-${i}-${Date.now()}`);
    for (const id of ids) await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
    const pushes = await subscribeAll(svc.url, ids);
    const stream = await startSteadyStream({ brokers: cluster.bootstrapServers, topic: topics.results, ids, partitions: PARTITIONS, tickMs: 100 });
    await eventually(() => pushes.received.size >= TESTS * 10, 60_000, 'the stream to flow');
    // The second replica shares the first one's state, as replicas sharing Redis do.
    const joinedAt = Date.now();
    const second = await startTestService({
      brokers: cluster.bootstrapServers,
      log: svc.log,
      env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group },
    });
    await second.ready();
    await eventually(() => second.service.broker.consumer.stats.consumed > 0, 60_000, 'the second replica to consume');
    const leftAt = Date.now();
    await second.stop();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await stream.stop();
    await eventually(() => stream.produced.every((r) => pushes.received.has(`${r.id}/${r.sequence}`)), 120_000, 'every record pushed');

    const last = stream.produced.at(-1)?.sequence ?? 0;
    for (const id of ids) expect((await svc.log.get(id))?.messages.map((m) => m.sequence)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect([...pushes.received].filter(([, times]) => times.length !== 1)).toEqual([]);
    expect(pushes.received.size).toBe(stream.produced.length);
    const wait = (from: number, to: number) =>
      Math.max(
        ...stream.produced.filter((r) => r.sentAt >= from && r.sentAt < to).map((r) => (pushes.received.get(`${r.id}/${r.sequence}`)?.[0] ?? 0) - r.sentAt),
      );
    console.log(
      `in-process replica: longest wait of a record ${seconds(wait(joinedAt, leftAt))} around the join, ${seconds(wait(leftAt, leftAt + 5000))} around the graceful leave (timed figures: npm run bench -- --only=rebalance)`,
    );
    await pushes.dispose();
  });

  it('startTest while the requests leader is down fails with BROKER_UNAVAILABLE or succeeds, and no success is lost', { timeout: 300_000 }, async () => {
    const victim = await cluster.leaderOf(topics.requests, 0);
    const answers: Array<{ at: number; id?: string; code?: string }> = [];
    const start = async () => {
      const r = await postGraphQL<{ startTest: { correlationId: string } }>(svc.url, 'mutation { startTest(input: { name: "fault" }) { correlationId } }');
      const at = Date.now();
      answers.push(r.body.data?.startTest ? { at, id: r.body.data.startTest.correlationId } : { at, code: String(r.body.errors?.[0]?.extensions?.code) });
    };
    for (let i = 0; i < 3; i++) await start();
    const killedAt = Date.now();
    await cluster.killNode(victim);
    // Requests keep coming during the election and after it, a few at a time as users would send them.
    while (Date.now() - killedAt < 25_000) {
      await Promise.all([start(), start()]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const moved = await cluster.leaderOf(topics.requests, 0);
    await cluster.startNode(victim);
    await fullyReplicated(cluster, [topics.results, topics.requests]);

    const failures = answers.filter((a) => a.id === undefined);
    for (const f of failures) expect(f.code).toBe('BROKER_UNAVAILABLE');
    const successes = answers.filter((a) => a.id !== undefined).map((a) => a.id as string);
    // Some succeeded with the old leader dead: on the new one.
    expect(answers.filter((a) => a.id !== undefined && a.at > killedAt).length).toBeGreaterThan(0);
    const onTopic = await readAll(topics.requests);
    const counts = new Map<string, number>();
    for (const id of onTopic) counts.set(id, (counts.get(id) ?? 0) + 1);
    // At least once: a retry after an answer lost with the leader may write a request twice (the
    // publisher is deliberately not idempotent, see kafka-request-publisher.ts), never zero times.
    for (const id of successes) expect(counts.get(id) ?? 0, `request ${id}`).toBeGreaterThanOrEqual(1);
    const twice = [...counts.values()].filter((n) => n > 1).length;
    const sentAnyway = [...counts.keys()].filter((id) => !successes.includes(id)).length;
    console.log(
      `startTest with the requests leader (node ${victim}) killed, leader moved to ${moved}: ${successes.length} succeeded, ${failures.length} BROKER_UNAVAILABLE, ${sentAnyway} reported failed yet on the topic, ${twice} on it twice`,
    );
  });
});

/** Every correlation id on a topic, read from the beginning with a consumer of its own. */
async function readAll(topic: string): Promise<string[]> {
  const admin = await cluster.admin();
  const offsets = await admin.fetchTopicOffsets(topic);
  const total = offsets.reduce((n, o) => n + Number(o.high), 0);
  const consumer = new Kafka({ clientId: 'read-all', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `read-all-${Date.now()}`,
  });
  const ids: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen += 1;
        ids.push((JSON.parse(String(message.value)) as { correlationId: string }).correlationId);
      },
    });
    await eventually(() => seen >= total, 60_000, 'the whole topic');
  } finally {
    await consumer.disconnect();
  }
  return ids;
}
