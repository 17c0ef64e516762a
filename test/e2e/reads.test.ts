/**
 * Reads priced by what they read, in memory and in Redis: `test`, `tests`, `recentTests` and
 * `GET /tests/{id}` load summaries and check ownership before any message is read; messages are
 * read a page at a time, and only when selected; what an operation reads stays within its cost,
 * and the cost is the model's on HTTP, WebSocket and SSE alike. The log is wrapped to count every
 * message it hands out.
 */
import { randomUUID } from 'node:crypto';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { TestRecord, TestSummary } from '../../src/domain/types.js';
import { operationCost } from '../../src/graphql/pipeline/plugins/operation-limits.js';
import { createSchema } from '../../src/graphql/schema/schema.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { collect, createSseClient, createWsClient, eventually, postGraphQL, sseErrors, wsErrors, type ClientErrors } from '../support/graphql.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { commandsNaming, openMonitor } from '../support/redis-monitor.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const topics = uniqueTopics('reads');
const redisPrefix = `reads-${randomUUID().slice(0, 8)}`;
/** Messages of each seeded test. */
const MESSAGES = 50;
let cluster: MockCluster;
let state: ConfiguredResultLog;
const modes = {} as Record<'memory' | 'redis', TestService>;
/** Messages each mode's log handed out since the last reset. */
const read = { memory: 0, redis: 0 };

/** Counts the messages the log answers with: whole records, summaries (none) and pages. */
const counting =
  (mode: keyof typeof read) =>
  (log: ResultLog): ResultLog => ({
    ...log,
    get: async (id) => {
      const test = await log.get(id);
      read[mode] += test?.messages.length ?? 0;
      return test;
    },
    getMany: async (ids) => {
      const tests: Array<TestSummary | TestRecord | null> = await log.getMany(ids);
      for (const test of tests) if (test !== null && 'messages' in test) read[mode] += test.messages.length;
      return tests as Array<TestSummary | null>;
    },
    messages: async (id, range) => {
      const page = await log.messages(id, range);
      read[mode] += page?.messages.length ?? 0;
      return page;
    },
  });

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  // Every request executes (response cache off): each counts what it reads.
  const env = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES: '0' };
  state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix }), createSilentLogger());
  const [memory, redis] = await Promise.all([
    startTestService({ brokers: cluster.bootstrapServers, env: { ...env, KAFKA_GROUP_ID: `${topics.group}-memory` }, wrapLog: counting('memory') }),
    startTestService({
      brokers: cluster.bootstrapServers,
      env: { ...env, KAFKA_GROUP_ID: `${topics.group}-redis`, STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix },
      log: state.log,
      wrapLog: counting('redis'),
    }),
  ]);
  Object.assign(modes, { memory, redis });
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(modes).map((svc) => svc.stop()));
  await state?.dispose();
  await cluster?.stop();
  await deleteRedisKeys(`${redisPrefix}:*`);
});

/** Tests of `owner` with `messages` results each (sequences 1…), written straight to the log. */
async function seed(svc: TestService, owner: string, count: number, messages = MESSAGES): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `${owner}-${randomUUID()}`);
  for (const correlationId of ids) {
    await svc.log.create({ correlationId, input: { owner }, owner });
    for (let from = 1; from <= messages; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, messages - from + 1) }, (_, i) => ({
        correlationId,
        key: `s:${from + i}`,
        messageId: null,
        sequence: from + i,
        status: null,
        final: false,
        payload: { n: from + i },
        producedAt: null,
      }));
      await svc.log.append(batch);
    }
  }
  return ids;
}

const schema = createSchema();
const costOf = (query: string, variables: Record<string, unknown>) => operationCost(schema, parse(query), variables, undefined);
type Transport = 'http' | 'graphql-ws' | 'graphql-sse';
const TRANSPORTS: readonly Transport[] = ['http', 'graphql-ws', 'graphql-sse'];

/** Runs a query over `transport` with the default test token (subject `tester`): its one result. */
async function run(
  transport: Transport,
  url: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<{ data?: Record<string, any> | null; errors?: ClientErrors }> {
  if (transport === 'http') return (await postGraphQL(url, query, variables)).body as { data?: Record<string, any> | null; errors?: ClientErrors };
  const client = transport === 'graphql-ws' ? createWsClient(url) : createSseClient(url);
  try {
    const sub = collect(client, query, variables);
    await sub.done;
    return sub.results[0] as { data?: Record<string, any> | null; errors?: ClientErrors };
  } finally {
    await client.dispose();
  }
}

const TESTS_WITH_PAGES =
  'query($ids: [ID!]!, $first: Int) { tests(correlationIds: $ids) { correlationId messages(first: $first) { totalCount nodes { sequence } } } }';

describe.each(['memory', 'redis'] as const)('reads in %s', (mode) => {
  it('read no message of a test the caller may not see: tests, test, GET /tests/{id}', async () => {
    const svc = modes[mode];
    const theirs = await seed(svc, 'bob', 5);
    read[mode] = 0;
    const many = await postGraphQL(svc.url, TESTS_WITH_PAGES, { ids: theirs, first: 10 });
    expect(many.body).toEqual({ data: { tests: [null, null, null, null, null] } });
    const one = await postGraphQL(svc.url, 'query($id: ID!) { test(correlationId: $id) { messages { totalCount } } }', { id: theirs[0] });
    expect(one.body).toEqual({ data: { test: null } });
    expect((await authedFetch(`${svc.url}/tests/${theirs[0]}`)).status).toBe(404);
    expect(read[mode]).toBe(0);
    // Their owner reads them, a page of each.
    const bob = await mintToken({ sub: 'bob' });
    const own = await postGraphQL(svc.url, TESTS_WITH_PAGES, { ids: theirs, first: 10 }, { token: bob });
    expect(own.body.data?.tests.map((test: { messages: { totalCount: number } }) => test.messages.totalCount)).toEqual([50, 50, 50, 50, 50]);
    expect(read[mode]).toBe(5 * 10);
  });

  it('read summaries for a selection without messages, and the page asked for with one', async () => {
    const svc = modes[mode];
    const ids = await seed(svc, 'tester', 20);
    read[mode] = 0;
    const plain = await postGraphQL(svc.url, 'query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount input } }', { ids });
    expect(plain.body.data?.tests[0]).toEqual({ correlationId: ids[0], status: 'RUNNING', messageCount: MESSAGES, input: { owner: 'tester' } });
    const recent = await postGraphQL(svc.url, '{ recentTests(first: 20) { nodes { correlationId messageCount } } }');
    expect(recent.body.data?.recentTests.nodes).toHaveLength(20);
    expect(read[mode]).toBe(0);

    const pages = await postGraphQL(svc.url, TESTS_WITH_PAGES, { ids, first: 10 });
    expect(pages.body.data?.tests[19]).toEqual({
      correlationId: ids[19],
      messages: { totalCount: MESSAGES, nodes: Array.from({ length: 10 }, (_, i) => ({ sequence: i + 1 })) },
    });
    expect(read[mode]).toBe(20 * 10);

    read[mode] = 0;
    const first = await postGraphQL(svc.url, 'query($id: ID!) { test(correlationId: $id) { messages(first: 10) { pageInfo { endCursor } } } }', { id: ids[0] });
    const after = first.body.data?.test.messages.pageInfo.endCursor as string;
    const next = await postGraphQL(
      svc.url,
      'query($id: ID!, $after: String) { test(correlationId: $id) { messages(first: 10, after: $after) { pageInfo { hasNextPage } nodes { sequence } } } }',
      { id: ids[0], after },
    );
    expect(next.body.data?.test.messages).toEqual({ pageInfo: { hasNextPage: true }, nodes: Array.from({ length: 10 }, (_, i) => ({ sequence: i + 11 })) });
    expect(read[mode]).toBe(20);
  });

  it('read no more messages than an operation costs, on HTTP, WebSocket and SSE', async () => {
    const svc = modes[mode];
    const ids = await seed(svc, 'tester', 20);
    const operations: Array<[string, Record<string, unknown>]> = [
      ['query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount } }', { ids }],
      ['query($id: ID!) { test(correlationId: $id) { status } }', { id: ids[0] }],
      [TESTS_WITH_PAGES, { ids, first: 3 }],
      ['{ recentTests(first: 20) { nodes { correlationId messages(first: 2) { nodes { sequence } } } } }', {}],
    ];
    for (const transport of TRANSPORTS) {
      for (const [query, variables] of operations) {
        read[mode] = 0;
        const result = await run(transport, svc.url, query, variables);
        expect(result.errors, `${transport}: ${query}`).toBeUndefined();
        expect(read[mode], `${transport}: ${query}`).toBeLessThanOrEqual(costOf(query, variables));
      }
    }
  });
});

describe('the cost of a selection that reads messages', () => {
  it("is the model's, and refused past the budget alike, on HTTP, WebSocket and SSE", async () => {
    const svc = modes.memory;
    const ids = Array.from({ length: 100 }, (_, i) => `costly-${i}`);
    const query = 'query($ids: [ID!]!) { tests(correlationIds: $ids) { messages(first: 100) { nodes { sequence payload } } } }';
    // 1 + 100 ids × (1 + 100 messages × (1 + 2 fields)).
    expect(costOf(query, { ids })).toBe(30_101);
    const http = await postGraphQL(svc.url, query, { ids });
    expect(http.status).toBe(400);
    const refusals = [http.body.errors as ClientErrors, await wsErrors(svc.url, query, { ids }), await sseErrors(svc.url, query, { ids })];
    for (const errors of refusals) expect(errors[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost: 30_101, maxCost: 10_000 });
    // Within it: 20 ids × 100 messages fit.
    expect(costOf(query, { ids: ids.slice(0, 20) })).toBe(6021);
    for (const transport of TRANSPORTS) expect((await run(transport, svc.url, query, { ids: ids.slice(0, 20) })).errors).toBeUndefined();
  });
});

describe('GET /tests/{id}', () => {
  const svc = () => modes.memory;
  const get = async (path: string) => {
    const response = await authedFetch(`${svc().url}${path}`);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it('answers a test of up to 100 messages whole, as before', async () => {
    const [id] = await seed(svc(), 'tester', 1, 6);
    const { status, body } = await get(`/tests/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ correlationId: id, status: 'RUNNING', input: { owner: 'tester' }, messageCount: 6, links: { self: `/tests/${id}` } });
    expect(body.messages.map((m: { sequence: number; id: string }) => [m.sequence, m.id])).toEqual(
      Array.from({ length: 6 }, (_, i) => [i + 1, `${id}/s:${i + 1}`]),
    );
    expect(body.links).not.toHaveProperty('next');
  });

  it('answers 100 messages by default, or ?first=, with a next link while more follow', async () => {
    const [id] = await seed(svc(), 'tester', 1, 150);
    read.memory = 0;
    const first = await get(`/tests/${id}`);
    expect(first.body.messages).toHaveLength(100);
    expect(first.body).toMatchObject({ messageCount: 150, links: { next: `/tests/${id}?first=100&after=${encodeURIComponent(`${id}/s:100`)}` } });
    const rest = await get(first.body.links.next);
    expect(rest.body.messages.map((m: { sequence: number }) => m.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i + 101));
    expect(rest.body.links).toEqual({ self: `/tests/${id}` });
    expect(read.memory).toBe(150);
    const small = await get(`/tests/${id}?first=20&after=${encodeURIComponent(`${id}/s:140`)}`);
    expect(small.body.messages.map((m: { sequence: number }) => m.sequence)).toEqual(Array.from({ length: 10 }, (_, i) => i + 141));
    expect((await get(`/tests/${id}?first=0`)).body).toMatchObject({ messageCount: 150, messages: [], links: { self: `/tests/${id}` } });
  });

  it('refuses a page size out of range, or an after that is no message id of the test, with 400, and one of a message no longer there with 410', async () => {
    const [id] = await seed(svc(), 'tester', 1, 3);
    for (const query of ['first=-1', 'first=1001', 'first=ten', 'first=1&first=2']) {
      expect(await get(`/tests/${id}?${query}`), query).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', argument: 'first' } });
    }
    for (const after of ['other/s:1', `${id}/`]) {
      expect(await get(`/tests/${id}?after=${encodeURIComponent(after)}`), after).toMatchObject({
        status: 400,
        body: { code: 'BAD_USER_INPUT', argument: 'after' },
      });
    }
    expect(await get(`/tests/${id}?after=${encodeURIComponent(`${id}/s:9`)}`)).toMatchObject({
      status: 410,
      body: { code: 'CURSOR_EXPIRED', argument: 'after' },
    });
  });
});

describe('a page of a 10,000-message test in Redis', () => {
  it('test { messages(first: 10) } reads its 10 messages: one LRANGE of 10', async () => {
    const svc = modes.redis;
    const [id] = await seed(svc, 'tester', 1, 10_000);
    read.redis = 0;
    const monitor = await openMonitor();
    const commands = commandsNaming(monitor, `{${id}}`);
    const response = await postGraphQL(
      svc.url,
      'query($id: ID!) { test(correlationId: $id) { messageCount messages(first: 10) { totalCount nodes { sequence } } } }',
      { id },
    );
    await eventually(() => commands.some(([name]) => name === 'lrange'), 5000, 'the page read');
    monitor.disconnect();
    expect(response.body.data?.test).toEqual({
      messageCount: 10_000,
      messages: { totalCount: 10_000, nodes: Array.from({ length: 10 }, (_, i) => ({ sequence: i + 1 })) },
    });
    expect(commands.filter(([name]) => name === 'lrange').map((command) => command.slice(2))).toEqual([['0', '9']]);
    expect(read.redis).toBe(10);
  });
});
