/**
 * Queries: `test(correlationId)` returning 100 messages and `tests` over 20 ids, against this
 * service's /graphql and GET /tests/{id}, and against bare graphql-js on node:http over the same
 * schema and data (the ceiling), and against the common-stack peer (`peers/common-stack/`) over
 * the same data. Completed tests and tests still receiving messages are measured apart: besides
 * the 20 completed tests, 10 live ones receive 100 messages a second between them in the service
 * and in the ceiling alike (stored straight into each one's memory store, so the response cache
 * sees every change), and `test()` on a live test, `tests()` over completed and over half live
 * ids are reported each with its ratio to the ceiling. Requests/s at saturation (10 connections, no
 * pipelining), then p99 at half that rate. Load comes from autocannon in this process; the servers
 * are separate processes.
 */
import autocannon from 'autocannon';
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';

/** `test(correlationId)` with its first 100 messages, as the query benchmarks ask it. */
export const TEST_100 = `query($id: ID!) { test(correlationId: $id) { correlationId status messageCount messages(first: 100) { nodes { id sequence status payload receivedAt } } } }`;
const TESTS_20 = `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount updatedAt } }`;

/** Tests still receiving messages, and the messages a second they receive between them. */
const LIVE_TESTS = 10;
const LIVE_RATE = 100;
const LIVE_TEST = `test() with 100 messages of a live test (${LIVE_RATE} messages/s over ${LIVE_TESTS} live tests)`;
const MIXED_TESTS = `tests() over 20 ids, 10 of them live`;

/** An HTTP request autocannon repeats. */
export interface Target {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
}

/** Loads `target` for `seconds` (at `rate` requests/s, or as fast as it answers): requests/s and p99 in ms; throws on any error. */
export async function load(target: Target, seconds: number, rate?: number) {
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
    connections: 10,
    pipelining: 1,
    duration: seconds,
    ...(rate === undefined ? {} : { overallRate: rate }),
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.method} ${target.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** Runs the query comparison for `seconds` per measurement. */
export async function benchQueries(cluster: BenchBroker, seconds: number): Promise<Row[]> {
  const env = { ...BENCH_AUTH_ENV, KAFKA_BROKERS: cluster.bootstrapServers.join(','), KAFKA_GROUP_ID: `bench-q-${Date.now()}`, GRAPHQL_MAX_COST: '1000000' };
  const live = ['--live', String(LIVE_TESTS), '--rate', String(LIVE_RATE)];
  const service = startWorker('service', ['--tests', '20', '--messages', '100', ...live], env);
  const bare = startWorker('bare-graphql', ['--tests', '20', '--messages', '100', ...live]);
  // The peer on the same (idle) broker, with the same seeded data in its memory store.
  const peer = startWorker('peer', ['--tests', '20', '--messages', '100'], {
    KAFKA_BROKERS: env.KAFKA_BROKERS,
    KAFKA_GROUP_ID: `bench-q-peer-${Date.now()}`,
    PEER_VARIANT: 'memory',
  });
  try {
    const { url, ids, live: liveIds } = (await service.ready) as { url: string; ids: string[]; live: string[] };
    const mixed = [...ids.slice(0, 10), ...liveIds.slice(0, 10)];
    const { url: bareUrl } = (await bare.ready) as { url: string };
    const { url: peerUrl } = (await peer.ready) as { url: string };
    const token = await benchToken();
    const json = { 'content-type': 'application/json' };
    const authed = { ...json, authorization: `Bearer ${token}` };
    const gql = (base: string, headers: Record<string, string>, query: string, variables: object): Target => ({
      url: `${base}/graphql`,
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
    });
    // [benchmark, variant, target, role, the service's target ratio to the ceiling]
    const cases: Array<[string, string, Target, 'ceiling' | 'service' | 'peer', number | undefined]> = [
      ['test() with 100 messages', 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TEST_100, { id: ids[0] }), 'ceiling', undefined],
      ['test() with 100 messages', 'service /graphql', gql(url, authed, TEST_100, { id: ids[0] }), 'service', 1.5],
      [
        'test() with 100 messages',
        'service GET /tests/{id}',
        { url: `${url}/tests/${ids[0]}`, method: 'GET', headers: { authorization: `Bearer ${token}` } },
        'service',
        1,
      ],
      ['test() with 100 messages', 'common-stack peer /graphql', gql(peerUrl, authed, TEST_100, { id: ids[0] }), 'peer', undefined],
      [LIVE_TEST, 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TEST_100, { id: liveIds[0] }), 'ceiling', undefined],
      [LIVE_TEST, 'service /graphql', gql(url, authed, TEST_100, { id: liveIds[0] }), 'service', 1],
      ['tests() over 20 ids', 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TESTS_20, { ids }), 'ceiling', undefined],
      ['tests() over 20 ids', 'service /graphql', gql(url, authed, TESTS_20, { ids }), 'service', 1.2],
      ['tests() over 20 ids', 'common-stack peer /graphql', gql(peerUrl, authed, TESTS_20, { ids }), 'peer', undefined],
      [MIXED_TESTS, 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TESTS_20, { ids: mixed }), 'ceiling', undefined],
      [MIXED_TESTS, 'service /graphql', gql(url, authed, TESTS_20, { ids: mixed }), 'service', undefined],
    ];
    type Load = Awaited<ReturnType<typeof load>>;
    const measured: Array<{ benchmark: string; variant: string; role: string; wanted: number | undefined; saturated: Load; half: Load }> = [];
    for (const [benchmark, variant, target, role, wanted] of cases) {
      await load(target, 1); // warm up
      const saturated = await load(target, seconds);
      const half = await load(target, seconds, Math.max(1, Math.floor(saturated.rps / 2)));
      measured.push({ benchmark, variant, role, wanted, saturated, half });
    }
    // Ratios once everything is measured: the service's to the ceiling and to the peer, the peer's to the ceiling.
    const rps = (benchmark: string, role: string) => measured.find((m) => m.benchmark === benchmark && m.role === role)?.saturated.rps;
    const rows: Row[] = [];
    for (const { benchmark, variant, role, wanted, saturated, half } of measured) {
      const ceiling = rps(benchmark, 'ceiling');
      const ratio = role === 'ceiling' || ceiling === undefined ? undefined : saturated.rps / ceiling;
      const toPeer = rps(benchmark, 'peer');
      rows.push({
        benchmark: 'queries',
        variant: `${benchmark}: ${variant}`,
        value: saturated.rps,
        unit: 'requests/s',
        ...(ratio === undefined ? {} : { ratio }),
        ...(role === 'service' && toPeer !== undefined ? { ratioToPeer: saturated.rps / toPeer } : {}),
        ...(ratio === undefined || wanted === undefined ? {} : { target: `≥ ${wanted.toFixed(1)}×`, met: ratio >= wanted }),
      });
      rows.push({ benchmark: 'queries', variant: `${benchmark}: ${variant}, p99 at half rate`, value: half.p99, unit: 'ms' });
    }
    return rows;
  } finally {
    await service.stop();
    await bare.stop();
    await peer.stop();
  }
}
