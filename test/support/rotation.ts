/**
 * The rotation scenario: replicas (`STATE_STORE=redis`, `SERVICE_ROLE=all`) behind the test's own
 * round-robin balancer, which probes each one's `/readyz` and routes only to those that answer 200,
 * as a load balancer or a Kubernetes Service does. A read load (REST `GET /tests/{id}`, GraphQL
 * `test` queries, new graphql-ws subscriptions) runs throughout while results stream in, and the
 * consumer group changes: a third replica joins, one leaves with SIGTERM, (on a cluster that has
 * one to lose) the group coordinator is killed, and one replica is killed with SIGKILL. Then:
 * - no read fails: each answers, with every stored message of its test in order and none twice
 *   (a read the balancer had sent to the replica just killed, and that found no server, is sent
 *   to another replica once, as a balancer retries a refused connection; only that one may be);
 * - `/readyz` of every replica that serves its API answers 200 throughout, from its first 200 to
 *   the signal that stops it; the SIGTERMed one answers 503 for its `SHUTDOWN_DELAY_MS`, so the
 *   balancer takes it out before its listener closes;
 * - each group change shows on replica `a`, which stays to the end: `rcs_consumer_state_changes_total`
 *   counts a rejoin for each, and its `/readyz` body's consumer check leaves `ok` while it stays 200
 *   (where rebalances last seconds, for each change; where they take a fraction of a second, a
 *   change may settle between two probes and the metric alone records it, but the coordinator's
 *   death lasts tens of seconds and is always seen);
 * - nothing is lost or stored twice: every result is in the store once, in order, and a live
 *   subscriber on `a` was pushed each exactly once.
 * Used by test/conformance/rotation.test.ts (mock cluster, one Kafka node) and
 * test/kafka/rotation.test.ts (three Kafka nodes, with the coordinator's death).
 */
import type { Client } from 'graphql-ws';
import { expect } from 'vitest';
import { collect, createWsClient, eventually, postGraphQL } from './graphql.js';
import { result, type TestProducer, type TestRecordInput } from './kafka.js';
import { metric, readyz, spawnService, waitReady, type ServiceProcess } from './process.js';
import type { uniqueTopics } from './service.js';
import { authedFetch } from './tokens.js';

/** Partitions the scenario's results topic must have. */
export const ROTATION_PARTITIONS = 6;
/** Tests whose results stream in during the run, one per partition. */
const LIVE = 6;
/** Tests complete before the run, for subscriptions that replay and end. */
const DONE = 3;
const DONE_MESSAGES = 5;
const PROBE_MS = 200;
const SHUTDOWN_DELAY_MS = 1500;

const READ = `query($id: ID!) { test(correlationId: $id) { messageCount messages(first: 1000) { nodes { sequence } } } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;

/** Where the scenario runs. */
export interface RotationSetup {
  /** Printed with the figures. */
  readonly label: string;
  readonly bootstrapServers: readonly string[];
  readonly topics: ReturnType<typeof uniqueTopics>;
  /** Prefix of the Redis keys the replicas share. */
  readonly redisPrefix: string;
  /** A producer of result records on this cluster. */
  readonly producer: TestProducer;
  /** Settings of the replicas that stay, and of the one that will be killed (see brokers.ts). */
  readonly groupEnv: Readonly<Record<string, string>>;
  readonly killedMemberEnv: Readonly<Record<string, string>>;
  /** Rebalances take seconds here (the mock): every group change must show in the body. */
  readonly slowRebalances: boolean;
  /**
   * Kills the group's coordinator and resolves once it is dead; the scenario then waits for the
   * replicas to rejoin, and calls `restore` (start the node again) before the next change.
   */
  readonly killCoordinator?: (groupId: string) => Promise<{ restore(): Promise<void> }>;
}

/** One replica as the balancer sees it. */
interface Member {
  readonly process: ServiceProcess;
  /** Routed to: its last probe answered 200. */
  inRotation: boolean;
  /** When it was signalled (the probe's answers after that are still kept). */
  stoppedAt?: number;
  killed: boolean;
}

/** One answer of a probe. */
interface Probe {
  readonly name: string;
  /** When it was sent. */
  readonly at: number;
  /** When its answer came, or its failure. */
  readonly doneAt: number;
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

/** Runs the scenario (see the file's comment); every replica it started is gone when it returns or throws. */
export async function runRotation(setup: RotationSetup): Promise<void> {
  const { topics, producer } = setup;
  const members: Member[] = [];
  try {
    await scenario(setup, members);
  } finally {
    for (const m of members) m.process.kill('SIGKILL');
    await Promise.all(members.map((m) => m.process.exited));
  }

  async function scenario(s: RotationSetup, all: Member[]): Promise<void> {
    const start = async (name: string, extra: Readonly<Record<string, string>> = s.groupEnv): Promise<Member> => {
      const process_ = await spawnService(name, {
        STATE_STORE: 'redis',
        REDIS_KEY_PREFIX: s.redisPrefix,
        KAFKA_BROKERS: s.bootstrapServers.join(','),
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: topics.group,
        SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
        INSTANCE_ID: name,
        ...extra,
      });
      const member: Member = { process: process_, inRotation: false, killed: false };
      all.push(member);
      return member;
    };
    const joins = (m: Member) => metric(m.process, /^rcs_consumer_state_changes_total\{state="joined"\} (\d+)$/m);
    /** Sends until the broker acknowledges (a leader may be moving); a copy is one message in the store. */
    const send = async (records: readonly TestRecordInput[]) => {
      for (;;) {
        try {
          await producer.send(topics.results, records);
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    };

    const [a, b] = await Promise.all([start('a'), start('b')]);
    await Promise.all([waitReady(a.process), waitReady(b.process)]);

    // Tests: some complete already, some that results keep coming for.
    const startTest = async () => (await postGraphQL(a.process.url, `mutation { startTest { correlationId } }`)).body.data?.startTest.correlationId as string;
    const done: string[] = [];
    const live: string[] = [];
    for (let i = 0; i < DONE; i++) done.push(await startTest());
    for (let i = 0; i < LIVE; i++) live.push(await startTest());
    await send(
      done.flatMap((id, i) =>
        Array.from({ length: DONE_MESSAGES }, (_, k) => ({
          ...result(id, { sequence: k + 1, final: k + 1 === DONE_MESSAGES }),
          partition: i % ROTATION_PARTITIONS,
        })),
      ),
    );
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
          all
            .filter((m) => !m.killed)
            .map(async (m) => {
              const at = Date.now();
              try {
                const answer = await readyz(m.process);
                probes.push({ name: m.process.name, at, doneAt: Date.now(), status: answer.status, consumer: answer.checks.consumer });
                m.inRotation = answer.status === 200;
              } catch {
                probes.push({ name: m.process.name, at, doneAt: Date.now(), status: 0, consumer: undefined });
                m.inRotation = false;
              }
            }),
        );
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
      }
    })();
    await eventually(() => a.inRotation && b.inRotation, 10_000, 'both replicas in rotation');

    // The stream: one record per live test every 100 ms, test i on partition i (one send per
    // partition, so a partition whose leader moves holds back no other).
    let sequence = 0;
    let streaming = true;
    const stream = (async () => {
      while (streaming) {
        sequence += 1;
        const n = sequence;
        await Promise.all(live.map((id, i) => send([{ ...result(id, { sequence: n }), partition: i % ROTATION_PARTITIONS }])));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // The read load: two clients, round-robin over the replicas in rotation.
    const reads: Read[] = [];
    let loading = true;
    let next = 0;
    const pick = (exclude?: Member): Member | undefined => {
      const routable = all.filter((m) => m.inRotation && !m.killed && m !== exclude);
      next += 1;
      return routable[next % Math.max(1, routable.length)];
    };
    // Answers every answer it got, right or wrong; throws only when no server answered.
    const readOnce = async (kind: Read['kind'], m: Member, n: number): Promise<{ ok: boolean; detail?: string }> => {
      const url = m.process.url;
      if (kind === 'rest') {
        const id = live[n % LIVE] as string;
        const response = await authedFetch(`${url}/tests/${id}`);
        if (response.status !== 200) return { ok: false, detail: `GET ${response.status} ${await response.text()}` };
        const seen = ((await response.json()) as { messages: Array<{ sequence: number }> }).messages.map((x) => x.sequence);
        return sequencesOk(seen) ? { ok: true } : { ok: false, detail: `GET sequences ${seen.join(',')}` };
      }
      if (kind === 'query') {
        const id = live[n % LIVE] as string;
        const response = await postGraphQL(url, READ, { id });
        const seen = ((response.body.data?.test?.messages.nodes ?? []) as Array<{ sequence: number }>).map((x) => x.sequence);
        if (response.status !== 200 || response.body.errors !== undefined || response.body.data?.test === null)
          return { ok: false, detail: `query ${response.status} ${JSON.stringify(response.body)}` };
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
        const kind = (['rest', 'query', 'subscription'] as const)[n % 3] as Read['kind'];
        const m = pick();
        const at = Date.now();
        if (m === undefined) {
          reads.push({ kind, replica: '-', at, ok: false, detail: 'no replica in rotation' });
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        try {
          reads.push({ kind, replica: m.process.name, at, ...(await readOnce(kind, m, n)) });
        } catch (error) {
          const other = pick(m);
          if (other === undefined) {
            reads.push({ kind, replica: m.process.name, at, ok: false, detail: String(error) });
          } else {
            const retried = await readOnce(kind, other, n).catch((e: unknown) => ({ ok: false, detail: `retry: ${String(e)}` }));
            reads.push({ kind, replica: other.process.name, at, retriedFrom: m.process.name, ...retried });
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loaders = [load(0), load(1)];
    const someReads = async (what: string) => {
      const from = reads.length;
      await eventually(() => reads.length >= from + 30, 30_000, `reads ${what}`);
    };
    await someReads('with two replicas');
    const windows: Array<{ event: string; from: number; to: number; mustShow: boolean }> = [];

    // 1. A third replica joins (with the short session of a member that will be killed).
    const joinsBefore = await joins(a);
    const joinStarted = Date.now();
    const c = await start('c', s.killedMemberEnv);
    await waitReady(c.process);
    await eventually(async () => (await joins(a)) > joinsBefore, 60_000, 'a to rejoin after c joined');
    await eventually(
      () => {
        const assigned = all.map((m) => m.process.assignment());
        return assigned.every((x) => x.length > 0) && assigned.flat().length === ROTATION_PARTITIONS && new Set(assigned.flat()).size === ROTATION_PARTITIONS;
      },
      60_000,
      'the partitions shared by three',
    );
    windows.push({ event: 'c joined', from: joinStarted, to: Date.now(), mustShow: s.slowRebalances });
    await someReads('with three replicas');

    // 2. b leaves gracefully.
    const joinsBeforeLeave = await joins(a);
    b.stoppedAt = Date.now();
    b.process.kill('SIGTERM');
    expect(await b.process.exited).toBe(0);
    await eventually(async () => (await joins(a)) > joinsBeforeLeave, 60_000, 'a to rejoin after b left');
    windows.push({ event: 'b left', from: b.stoppedAt, to: Date.now(), mustShow: s.slowRebalances });
    await someReads('after b left');

    // 3. Where there is one to lose, the group coordinator dies; a and c find the new one and rejoin.
    if (s.killCoordinator) {
      const joinsBeforeCoordinator = await joins(a);
      const killedAt = Date.now();
      const { restore } = await s.killCoordinator(topics.group);
      await eventually(async () => (await joins(a)) > joinsBeforeCoordinator, 180_000, 'a to rejoin after the coordinator died');
      await eventually(
        async () => (await readyz(a.process)).checks.consumer === 'ok' && (await readyz(c.process)).checks.consumer === 'ok',
        120_000,
        'both consumers back in the group',
      );
      windows.push({ event: 'coordinator killed', from: killedAt, to: Date.now(), mustShow: true });
      await restore();
      await someReads('after the coordinator died');
    }

    // 4. c is killed: its partitions wait for its session to expire, then move to a.
    const joinsBeforeKill = await joins(a);
    const killedAt = Date.now();
    c.stoppedAt = killedAt;
    c.process.kill('SIGKILL');
    await c.process.exited;
    c.killed = true;
    await eventually(async () => (await joins(a)) > joinsBeforeKill, 90_000, 'a to rejoin after c was killed');
    await eventually(() => a.process.assignment().length === ROTATION_PARTITIONS, 30_000, 'a to own every partition');
    windows.push({ event: 'c killed', from: killedAt, to: Date.now(), mustShow: s.slowRebalances });
    await someReads('after c was killed');

    // The end of the stream: a final record per test, then everything must be stored and pushed.
    streaming = false;
    await stream;
    const last = sequence + 1;
    await Promise.all(live.map((id, i) => send([{ ...result(id, { sequence: last, final: true }), partition: i % ROTATION_PARTITIONS }])));
    loading = false;
    await Promise.all(loaders);
    probing = false;
    await prober;
    await Promise.all(pushes.map((p) => p.done));
    await watcher.dispose();

    // No read failed; only reads sent to the replica just killed went elsewhere.
    expect(reads.filter((r) => !r.ok)).toEqual([]);
    expect(reads.filter((r) => r.retriedFrom !== undefined && !(r.retriedFrom === 'c' && r.at >= killedAt - 1000))).toEqual([]);
    const count = (k: Read['kind']) => reads.filter((r) => r.kind === k).length;
    expect(Math.min(count('rest'), count('query'), count('subscription'))).toBeGreaterThan(10);

    // Ready throughout: each replica from its first 200 to the signal that stopped it (a probe
    // still in flight when the signal came may find no server: it does not count).
    for (const m of all) {
      const own = probes.filter((p) => p.name === m.process.name);
      const first = own.find((p) => p.status === 200)?.at ?? Number.POSITIVE_INFINITY;
      const serving = own.filter((p) => p.at >= first && p.doneAt < (m.stoppedAt ?? Number.POSITIVE_INFINITY));
      expect(serving.length, m.process.name).toBeGreaterThan(0);
      expect(
        serving.filter((p) => p.status !== 200),
        m.process.name,
      ).toEqual([]);
    }
    // The SIGTERMed replica told the balancer before it closed its listener.
    expect(probes.some((p) => p.name === 'b' && p.at >= (b.stoppedAt ?? 0) && p.status === 503)).toBe(true);

    // The group changes show in a's body while it stays 200.
    const seen = windows.map((w) => ({
      ...w,
      states: [
        ...new Set(probes.filter((p) => p.name === 'a' && p.at >= w.from && p.at < w.to && p.status === 200 && p.consumer !== 'ok').map((p) => p.consumer)),
      ],
    }));
    console.log(
      `${setup.label}: /readyz of a stayed 200; its consumer check during the group changes: ${JSON.stringify(seen.map(({ event, states }) => ({ event, states })))}; ${reads.length} reads, ${reads.filter((r) => r.retriedFrom).length} resent after the kill`,
    );
    for (const w of seen) for (const state of w.states) expect(state).toMatch(/^(connecting|rebalancing|stalled: .+|crashed: .+)$/);
    // Where a change lasts longer than the probe period (the mock's rebalances, a dead coordinator)
    // the body must show it; a real broker's join or leave may settle between two probes, and the
    // state-change metric (asserted for every change) is what records it then.
    expect(seen.filter((w) => w.mustShow && w.states.length === 0).map((w) => w.event)).toEqual([]);

    // Nothing lost, nothing stored or pushed twice.
    const expected = Array.from({ length: last }, (_, k) => k + 1);
    for (const id of live) {
      const stored = await eventually(
        async () => {
          const nodes = (await postGraphQL(a.process.url, READ, { id })).body.data?.test?.messages.nodes as Array<{ sequence: number }> | undefined;
          return nodes?.length === last && nodes.map((x) => x.sequence);
        },
        60_000,
        `${id} complete`,
      );
      expect(stored).toEqual(expected);
    }
    for (const p of pushes) expect(p.results.map((r) => r.data?.testMessages.sequence)).toEqual(expected);
  }
}
