/**
 * Conformance, on each broker: readiness keeps the API in rotation while the consumer group
 * changes. Replicas (`STATE_STORE=redis`, `SERVICE_ROLE=all`) sit behind the test's own
 * round-robin balancer, which probes each one's `/readyz` and routes only to those that answer 200,
 * as a load balancer or a Kubernetes Service does. A read load (REST `GET /tests/{id}`, GraphQL
 * `test` queries, new graphql-ws subscriptions) runs throughout while results stream in, and the
 * group changes three times: a third replica joins, one leaves with SIGTERM, one is killed with
 * SIGKILL. Then:
 * - no read fails: each answers, with every stored message of its test in order and none twice
 *   (a read the balancer had sent to the replica just killed, and that found no server, is sent
 *   to another replica once, as a balancer retries a refused connection; only that one may be);
 * - `/readyz` of every replica that serves its API answers 200 throughout, from its first 200 to
 *   the signal that stops it; the SIGTERMed one answers 503 for its `SHUTDOWN_DELAY_MS`, so the
 *   balancer takes it out before its listener closes;
 * - each group change shows on the surviving replica: `rcs_consumer_state_changes_total` counts a
 *   rejoin for each, and its `/readyz` body's consumer check leaves `ok` while staying 200 (on the
 *   mock every rebalance lasts seconds and each one is seen; Kafka rebalances within a second or
 *   so, and the probe sees at least one of the three);
 * - nothing is lost or stored twice: every result is in the store once, in order, and a live
 *   subscriber on the surviving replica was pushed each exactly once.
 * The group coordinator's death is exercised on a three-node Kafka cluster in
 * test/kafka/cluster-faults.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { metric, readyz, spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { uniqueTopics } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const PARTITIONS = 6;
/** Tests whose results stream in during the run, one per partition. */
const LIVE = 6;
/** Tests complete before the run, for subscriptions that replay and end. */
const DONE = 3;
const DONE_MESSAGES = 5;
const PROBE_MS = 200;
const SHUTDOWN_DELAY_MS = 1500;

const READ = `query($id: ID!) { test(correlationId: $id) { messageCount messages(first: 1000) { nodes { sequence } } } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;

/** One replica as the balancer sees it. */
interface Member {
  readonly process: ServiceProcess;
  /** Routed to: its last probe answered 200. */
  inRotation: boolean;
  /** Stop probing and routing: it was signalled (the probe's answers after that are still kept). */
  stoppedAt?: number;
  killed: boolean;
}

/** One answer of a probe. */
interface Probe {
  readonly name: string;
  readonly at: number;
  readonly status: number;
  readonly consumer: string | undefined;
}

/** One read of the load. */
interface Read {
  readonly kind: 'rest' | 'query' | 'subscription';
  readonly replica: string;
  readonly ok: boolean;
  readonly detail?: string;
  /** It found no server on its first replica (killed) and went to another. */
  readonly retriedFrom?: string;
  /** When the first attempt was sent. */
  readonly at: number;
}

const sequencesOk = (seen: readonly number[]) => seen.every((s, i) => s === i + 1);

describe.each(TEST_BROKERS)('on $name', (kind) => {
  const topics = uniqueTopics(`rotation-${kind.name}`);
  const prefix = `rcs-rotation-${kind.name}-${process.pid}-${Date.now()}`;
  let broker: TestBroker;
  let producer: TestProducer;
  const members: Member[] = [];

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: PARTITIONS },
      { name: topics.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    for (const m of members) m.process.kill('SIGKILL');
    await Promise.all(members.map((m) => m.process.exited));
    await producer?.disconnect();
    await broker?.stop();
    await deleteRedisKeys(`${prefix}*`);
  });

  const start = async (name: string, extra: Readonly<Record<string, string>> = broker.groupEnv): Promise<Member> => {
    const process_ = await spawnService(name, {
      STATE_STORE: 'redis',
      REDIS_KEY_PREFIX: prefix,
      KAFKA_BROKERS: broker.bootstrapServers.join(','),
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: topics.group,
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      INSTANCE_ID: name,
      ...extra,
    });
    const member: Member = { process: process_, inRotation: false, killed: false };
    members.push(member);
    return member;
  };
  const joins = (m: Member) => metric(m.process, /^rcs_consumer_state_changes_total\{state="joined"\} (\d+)$/m);

  it('keeps every API-serving replica ready and every read answered while a replica joins, one leaves and one is killed', { timeout: 300_000 }, async () => {
    const [a, b] = await Promise.all([start('a'), start('b')]);
    await Promise.all([waitReady(a.process), waitReady(b.process)]);

    // Tests: some complete already, some that results keep coming for.
    const startTest = async () => (await postGraphQL(a.process.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string;
    const done: string[] = [];
    const live: string[] = [];
    for (let i = 0; i < DONE; i++) done.push(await startTest());
    for (let i = 0; i < LIVE; i++) live.push(await startTest());
    await producer.send(topics.results, done.flatMap((id, i) => Array.from({ length: DONE_MESSAGES }, (_, k) => ({ ...result(id, { sequence: k + 1, final: k + 1 === DONE_MESSAGES }), partition: i % PARTITIONS }))));
    for (const id of done) {
      await eventually(async () => (await postGraphQL(a.process.url, READ, { id })).body.data?.test?.messageCount === DONE_MESSAGES, 60_000, `${id} stored`);
    }

    // A live subscriber on the replica that stays, for every streaming test: each push once.
    const watcher: Client = createWsClient(a.process.url);
    const pushes = live.map((id) => collect<{ testMessages: { sequence: number } }>(watcher, FOLLOW, { id }));
    await collect(watcher, '{ __typename }').done;

    // The balancer's probes.
    const probes: Probe[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        await Promise.all(
          members
            .filter((m) => !m.killed)
            .map(async (m) => {
              const at = Date.now();
              try {
                const answer = await readyz(m.process);
                probes.push({ name: m.process.name, at, status: answer.status, consumer: answer.checks.consumer });
                m.inRotation = answer.status === 200;
              } catch {
                probes.push({ name: m.process.name, at, status: 0, consumer: undefined });
                m.inRotation = false;
              }
            }),
        );
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
      }
    })();
    await eventually(() => a.inRotation && b.inRotation, 10_000, 'both replicas in rotation');

    // The stream: one record per live test every 100 ms, test i on partition i.
    let sequence = 0;
    let streaming = true;
    const stream = (async () => {
      while (streaming) {
        sequence += 1;
        const s = sequence;
        await producer.send(topics.results, live.map((id, i) => ({ ...result(id, { sequence: s }), partition: i % PARTITIONS })));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // The read load: two clients, round-robin over the replicas in rotation.
    const reads: Read[] = [];
    let loading = true;
    let next = 0;
    const pick = (exclude?: Member): Member | undefined => {
      const routable = members.filter((m) => m.inRotation && !m.killed && m !== exclude);
      next += 1;
      return routable[next % Math.max(1, routable.length)];
    };
    const readOnce = async (kindOfRead: Read['kind'], m: Member, n: number): Promise<{ ok: boolean; detail?: string }> => {
      const url = m.process.url;
      if (kindOfRead === 'rest') {
        const id = live[n % LIVE] as string;
        const response = await authedFetch(`${url}/tests/${id}`);
        if (response.status !== 200) return { ok: false, detail: `GET ${response.status} ${await response.text()}` };
        const seen = ((await response.json()) as { messages: Array<{ sequence: number }> }).messages.map((x) => x.sequence);
        return sequencesOk(seen) ? { ok: true } : { ok: false, detail: `GET sequences ${seen.join(',')}` };
      }
      if (kindOfRead === 'query') {
        const id = live[n % LIVE] as string;
        const response = await postGraphQL(url, READ, { id });
        const seen = ((response.body.data?.test?.messages.nodes ?? []) as Array<{ sequence: number }>).map((x) => x.sequence);
        if (response.status !== 200 || response.body.errors !== undefined || response.body.data?.test === null) return { ok: false, detail: `query ${response.status} ${JSON.stringify(response.body)}` };
        return sequencesOk(seen) ? { ok: true } : { ok: false, detail: `query sequences ${seen.join(',')}` };
      }
      const id = done[n % DONE] as string;
      const client = createWsClient(url);
      try {
        const sub = collect<{ testMessages: { sequence: number } }>(client, FOLLOW, { id });
        await sub.done;
        const seen = sub.results.map((r) => r.data?.testMessages.sequence as number);
        return seen.length === DONE_MESSAGES && sequencesOk(seen) ? { ok: true } : { ok: false, detail: `subscription ${JSON.stringify(sub.results)}` };
      } finally {
        await client.dispose();
      }
    };
    const load = async (worker: number) => {
      let n = worker;
      while (loading) {
        n += 1;
        const kindOfRead = (['rest', 'query', 'subscription'] as const)[n % 3] as Read['kind'];
        const m = pick();
        const at = Date.now();
        if (m === undefined) {
          reads.push({ kind: kindOfRead, replica: '-', at, ok: false, detail: 'no replica in rotation' });
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        try {
          // readOnce answers every answer it got, right or wrong; it throws only when no server answered.
          reads.push({ kind: kindOfRead, replica: m.process.name, at, ...(await readOnce(kindOfRead, m, n)) });
        } catch (error) {
          const other = pick(m);
          if (other === undefined) {
            reads.push({ kind: kindOfRead, replica: m.process.name, at, ok: false, detail: String(error) });
          } else {
            const retried = await readOnce(kindOfRead, other, n).catch((e: unknown) => ({ ok: false, detail: `retry: ${String(e)}` }));
            reads.push({ kind: kindOfRead, replica: other.process.name, at, retriedFrom: m.process.name, ...retried });
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loaders = [load(0), load(1)];
    const readsNow = () => reads.length;
    const someReads = async (what: string) => {
      const from = readsNow();
      await eventually(() => readsNow() >= from + 30, 30_000, `reads ${what}`);
    };
    await someReads('with two replicas');

    // 1. A third replica joins (with the short session of a member that will be killed).
    const joinsBefore = await joins(a);
    const joinStarted = Date.now();
    const c = await start('c', broker.killedMemberEnv);
    await waitReady(c.process);
    await eventually(async () => (await joins(a)) > joinsBefore, 60_000, 'a to rejoin after c joined');
    await eventually(() => {
      const all = members.map((m) => m.process.assignment());
      return all.every((x) => x.length > 0) && all.flat().length === PARTITIONS && new Set(all.flat()).size === PARTITIONS;
    }, 60_000, 'the partitions shared by three');
    const joinedAt = Date.now();
    await someReads('with three replicas');

    // 2. b leaves gracefully.
    const joinsBeforeLeave = await joins(a);
    b.stoppedAt = Date.now();
    b.process.kill('SIGTERM');
    expect(await b.process.exited).toBe(0);
    await eventually(async () => (await joins(a)) > joinsBeforeLeave, 60_000, 'a to rejoin after b left');
    const leftAt = Date.now();
    await someReads('after b left');

    // 3. c is killed: its partitions wait for its session to expire, then move to a.
    const joinsBeforeKill = await joins(a);
    c.stoppedAt = Date.now();
    c.process.kill('SIGKILL');
    await c.process.exited;
    c.killed = true;
    await eventually(async () => (await joins(a)) > joinsBeforeKill, 90_000, 'a to rejoin after c was killed');
    await eventually(() => a.process.assignment().length === PARTITIONS, 30_000, 'a to own every partition');
    const killedAt = c.stoppedAt;
    await someReads('after c was killed');

    // The end of the stream: a final record per test, then everything must be stored and pushed.
    streaming = false;
    await stream;
    const last = sequence + 1;
    await producer.send(topics.results, live.map((id, i) => ({ ...result(id, { sequence: last, final: true }), partition: i % PARTITIONS })));
    loading = false;
    await Promise.all(loaders);
    probing = false;
    await prober;
    await Promise.all(pushes.map((p) => p.done));
    await watcher.dispose();

    // No read failed; only reads sent to the replica just killed went elsewhere.
    expect(reads.filter((r) => !r.ok)).toEqual([]);
    expect(reads.filter((r) => r.retriedFrom !== undefined && !(r.retriedFrom === 'c' && r.at >= killedAt - 1000))).toEqual([]);
    const byKind = (k: Read['kind']) => reads.filter((r) => r.kind === k).length;
    expect(Math.min(byKind('rest'), byKind('query'), byKind('subscription'))).toBeGreaterThan(10);

    // Ready throughout: each replica from its first 200 to the signal that stopped it.
    for (const m of members) {
      const own = probes.filter((p) => p.name === m.process.name);
      const first = own.find((p) => p.status === 200)?.at ?? Number.POSITIVE_INFINITY;
      const serving = own.filter((p) => p.at >= first && p.at < (m.stoppedAt ?? Number.POSITIVE_INFINITY));
      expect(serving.length, m.process.name).toBeGreaterThan(0);
      expect(serving.filter((p) => p.status !== 200), m.process.name).toEqual([]);
    }
    // The SIGTERMed replica told the balancer before it closed its listener.
    expect(probes.some((p) => p.name === 'b' && p.at >= (b.stoppedAt ?? 0) && p.status === 503)).toBe(true);

    // The group changes show in the surviving replica's body while it stays 200.
    const degraded = (from: number, to: number) => probes.filter((p) => p.name === 'a' && p.at >= from && p.at < to && p.status === 200 && p.consumer !== 'ok');
    const windows = [
      { event: 'c joined', from: joinStarted, to: joinedAt },
      { event: 'b left', from: b.stoppedAt ?? 0, to: leftAt },
      { event: 'c killed', from: killedAt, to: Date.now() },
    ];
    const seen = windows.map((w) => ({ event: w.event, states: [...new Set(degraded(w.from, w.to).map((p) => p.consumer))] }));
    console.log(`${kind.name}: /readyz of a stayed 200; its consumer check during the group changes: ${JSON.stringify(seen)}; ${reads.length} reads, ${reads.filter((r) => r.retriedFrom).length} resent after the kill`);
    for (const s of seen) for (const state of s.states) expect(state).toMatch(/^(connecting|rebalancing|stalled: .+|crashed: .+)$/);
    if (kind.name === 'mock') expect(seen.filter((s) => s.states.length === 0)).toEqual([]);
    else expect(seen.some((s) => s.states.length > 0)).toBe(true);

    // Nothing lost, nothing stored or pushed twice.
    const expected = Array.from({ length: last }, (_, k) => k + 1);
    for (const id of live) {
      const stored = await eventually(async () => {
        const nodes = (await postGraphQL(a.process.url, READ, { id })).body.data?.test?.messages.nodes as Array<{ sequence: number }> | undefined;
        return nodes?.length === last && nodes.map((x) => x.sequence);
      }, 60_000, `${id} complete`);
      expect(stored).toEqual(expected);
    }
    for (const p of pushes) expect(p.results.map((r) => r.data?.testMessages.sequence)).toEqual(expected);
  });
});
