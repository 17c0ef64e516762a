/**
 * Queries: `test(correlationId)` returning 100 messages and `tests` over 20 ids, against this
 * service's /graphql and GET /tests/{id}, and against bare graphql-js on node:http over the same
 * schema and data (the ceiling). Requests/s at saturation (10 connections, no pipelining), then p99
 * at half that rate. Load comes from autocannon in this process; the servers are separate processes.
 */
import autocannon from 'autocannon';
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';

const TEST_100 = `query($id: ID!) { test(correlationId: $id) { correlationId status messageCount messages(first: 100) { nodes { id sequence status payload receivedAt } } } }`;
const TESTS_20 = `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount updatedAt } }`;

interface Target {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
}

async function load(target: Target, seconds: number, rate?: number) {
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
  const service = startWorker('service', ['--tests', '20', '--messages', '100'], env);
  const bare = startWorker('bare-graphql', ['--tests', '20', '--messages', '100']);
  try {
    const { url, ids } = (await service.ready) as { url: string; ids: string[] };
    const { url: bareUrl } = (await bare.ready) as { url: string };
    const token = await benchToken();
    const json = { 'content-type': 'application/json' };
    const authed = { ...json, authorization: `Bearer ${token}` };
    const gql = (base: string, headers: Record<string, string>, query: string, variables: object): Target => ({ url: `${base}/graphql`, method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    // [benchmark, variant, target, the service's target ratio to the ceiling (none: this is the ceiling)]
    const cases: Array<[string, string, Target, number | undefined]> = [
      ['test() with 100 messages', 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TEST_100, { id: ids[0] }), undefined],
      ['test() with 100 messages', 'service /graphql', gql(url, authed, TEST_100, { id: ids[0] }), 1.5],
      ['test() with 100 messages', 'service GET /tests/{id}', { url: `${url}/tests/${ids[0]}`, method: 'GET', headers: { authorization: `Bearer ${token}` } }, 1],
      ['tests() over 20 ids', 'graphql-js on node:http (ceiling)', gql(bareUrl, json, TESTS_20, { ids }), undefined],
      ['tests() over 20 ids', 'service /graphql', gql(url, authed, TESTS_20, { ids }), 1.2],
    ];
    const rows: Row[] = [];
    const ceilings = new Map<string, number>();
    for (const [benchmark, variant, target, wanted] of cases) {
      await load(target, 1); // warm up
      const saturated = await load(target, seconds);
      const half = await load(target, seconds, Math.max(1, Math.floor(saturated.rps / 2)));
      if (wanted === undefined) ceilings.set(benchmark, saturated.rps);
      const base = ceilings.get(benchmark);
      const ratio = wanted === undefined || base === undefined ? undefined : saturated.rps / base;
      rows.push({ benchmark: 'queries', variant: `${benchmark}: ${variant}`, value: saturated.rps, unit: 'requests/s', ...(ratio === undefined || wanted === undefined ? {} : { ratio, target: `≥ ${wanted.toFixed(1)}×`, met: ratio >= wanted }) });
      rows.push({ benchmark: 'queries', variant: `${benchmark}: ${variant}, p99 at half rate`, value: half.p99, unit: 'ms' });
    }
    return rows;
  } finally {
    await service.stop();
    await bare.stop();
  }
}
