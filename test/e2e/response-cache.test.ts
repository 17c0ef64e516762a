/**
 * The response cache of `/graphql` over HTTP, with real tokens and real HTTP: in memory, and with
 * two instances sharing one Redis. The rule it keeps across replicas: once a write through B is
 * acknowledged and A's change feed has delivered its change (to a subscriber opened after the
 * cache's own, so after the cache has dropped what the change made stale), a read on A answers the
 * new page, never the cached one.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { IncomingMessage, TestChangeEvent } from '../../src/domain/types.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { eventually } from '../support/graphql.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';
import { onTimeline } from '../support/timeline.js';
import { mintToken } from '../support/tokens.js';

const topics = uniqueTopics('rcache');
const redisPrefix = `rcache-${randomUUID().slice(0, 8)}`;
let cluster: MockCluster;
const services: TestService[] = [];
const states: ConfiguredResultLog[] = [];
const tokens = { alice: '', bob: '', admin: '' };
let memory: TestService;
let small: TestService;
/** A memory store of two tests at most. */
let bounded: TestService;
let gated: TestService;
let brief: TestService;
/** What `gated`'s log says of its change feed. */
let delivery = { live: true, epoch: 0 };
let a: TestService;
let b: TestService;
/** A third instance on the shared Redis, on connections the test holds: its subscriber is cut. */
let c: TestService;
const connections = { commands: new Redis({ lazyConnect: true }), subscriber: new Redis({ lazyConnect: true }) };

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  tokens.alice = await mintToken({ sub: 'alice' }, { expiresInSeconds: 600 });
  tokens.bob = await mintToken({ sub: 'bob' }, { expiresInSeconds: 600 });
  tokens.admin = await mintToken({ sub: 'root', scope: 'tests:read tests:write tests:admin' }, { expiresInSeconds: 600 });
  const kafka = { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests };
  memory = await startTestService({ brokers: cluster.bootstrapServers, env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-mem` } });
  small = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-small`, GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES: '2' },
  });
  bounded = await startTestService({ brokers: cluster.bootstrapServers, env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-bounded`, STORE_MAX_TESTS: '2' } });
  gated = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-gated` },
    wrapLog: (log) => ({ ...log, changeDelivery: () => delivery }),
  });
  brief = await startTestService({ brokers: cluster.bootstrapServers, env: { ...kafka, KAFKA_GROUP_ID: `${topics.group}-brief`, STORE_TTL_SECONDS: '1' } });
  [a, b] = (await Promise.all(
    ['a', 'b'].map(async (name) => {
      const state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix }), createSilentLogger());
      states.push(state);
      return startTestService({
        brokers: cluster.bootstrapServers,
        env: { ...kafka, STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix, KAFKA_GROUP_ID: `${topics.group}-redis-${name}` },
        log: state.log,
      });
    }),
  )) as [TestService, TestService];
  await Promise.all([connections.commands.connect(), connections.subscriber.connect()]);
  const cLog = createRedisResultLog({
    redis: connections.commands,
    subscriber: connections.subscriber,
    ttlSeconds: 3600,
    maxMessagesPerTest: 10_000,
    prefix: redisPrefix,
    logger: createSilentLogger(),
  });
  c = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { ...kafka, STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix, KAFKA_GROUP_ID: `${topics.group}-redis-c` },
    log: cLog,
  });
  services.push(memory, small, bounded, gated, brief, a, b, c);
}, 60_000);

afterAll(async () => {
  await Promise.all(services.map((svc) => svc.stop()));
  await Promise.all(states.map((state) => state.dispose()));
  connections.commands.disconnect();
  connections.subscriber.disconnect();
  await cluster?.stop();
  await deleteRedisKeys(`${redisPrefix}:*`);
});

const TEST = `query($id: ID!) { test(correlationId: $id) { correlationId status messageCount messages(first: 100) { totalCount nodes { sequence payload } } } }`;
const TESTS = `query($ids: [ID!]!) { tests(correlationIds: $ids) { correlationId status messageCount } }`;

interface Raw {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

/** POSTs an operation and answers the body as sent, byte for byte. */
async function post(svc: TestService, token: string, query: string, variables: Record<string, unknown>, accept?: string): Promise<Raw> {
  const response = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(accept === undefined ? {} : { accept }) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}
const hit = (raw: Raw) => raw.headers.get('cache-status')?.includes('hit') ?? false;
const count = (raw: Raw) => (JSON.parse(raw.text) as { data: { test: { messageCount: number } | null } }).data.test?.messageCount ?? null;

let sequence = 0;
function message(correlationId: string, final = false): IncomingMessage {
  sequence++;
  return {
    correlationId,
    key: `${correlationId}-${sequence}`,
    messageId: null,
    sequence,
    status: final ? 'COMPLETED' : null,
    final,
    payload: { n: sequence },
    producedAt: null,
  };
}
async function started(log: ResultLog, owner: string, messages: number, final = false): Promise<string> {
  const id = randomUUID();
  await log.create({ correlationId: id, input: { name: 'cached' }, owner });
  await log.append(Array.from({ length: messages }, (_, i) => message(id, final && i === messages - 1)));
  return id;
}

describe('response cache, memory', () => {
  it('serves a completed test from the cache with the same bytes and headers', async () => {
    const id = await started(memory.log, 'alice', 100, true);
    const first = await post(memory, tokens.alice, TEST, { id });
    const second = await post(memory, tokens.alice, TEST, { id });
    expect(first.status).toBe(200);
    expect(hit(first)).toBe(false);
    expect(hit(second)).toBe(true);
    expect(second.text).toBe(first.text);
    expect(count(second)).toBe(100);
    const strip = (headers: Headers) => [...headers].filter(([name]) => !['date', 'x-request-id', 'cache-status'].includes(name));
    expect(strip(second.headers)).toEqual(strip(first.headers));
    const metrics = await (await fetch(`${memory.url}/metrics`)).text();
    expect(Number(/^rcs_graphql_response_cache_hits_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^rcs_graphql_response_cache_entries (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('does not share entries between callers who see different tests', async () => {
    const id = await started(memory.log, 'alice', 3, true);
    expect(count(await post(memory, tokens.alice, TEST, { id }))).toBe(3);
    const alice = await post(memory, tokens.alice, TEST, { id });
    expect(hit(alice)).toBe(true);
    // Bob may not see alice's test: null, whatever alice's entry says.
    const bob = await post(memory, tokens.bob, TEST, { id });
    expect(hit(bob)).toBe(false);
    expect(count(bob)).toBeNull();
    expect(hit(await post(memory, tokens.bob, TEST, { id }))).toBe(true);
    expect(count(await post(memory, tokens.bob, TEST, { id }))).toBeNull();
    const admin = await post(memory, tokens.admin, TEST, { id });
    expect(hit(admin)).toBe(false);
    expect(count(admin)).toBe(3);
  });

  it('drops an entry when a test it read changes, one answered null included', async () => {
    const id = await started(memory.log, 'alice', 2);
    const unknown = randomUUID();
    const ids = { ids: [id, unknown] };
    await post(memory, tokens.admin, TESTS, ids);
    expect(hit(await post(memory, tokens.admin, TESTS, ids))).toBe(true);
    await memory.log.append([message(id)]);
    const after = await post(memory, tokens.admin, TESTS, ids);
    expect(hit(after)).toBe(false);
    expect(JSON.parse(after.text).data.tests[0].messageCount).toBe(3);
    expect(hit(await post(memory, tokens.admin, TESTS, ids))).toBe(true);
    await memory.log.append([message(unknown)]);
    const appeared = await post(memory, tokens.admin, TESTS, ids);
    expect(hit(appeared)).toBe(false);
    expect(JSON.parse(appeared.text).data.tests[1].messageCount).toBe(1);
  });

  it('drops an entry that read a test by another spelling of its id when the test changes', async () => {
    const id = await started(memory.log, 'alice', 2);
    // The upper-case spelling reads the one test the lower-case id names (one spelling per id).
    const spelled = { id: id.toUpperCase() };
    expect(count(await post(memory, tokens.alice, TEST, spelled))).toBe(2);
    expect(hit(await post(memory, tokens.alice, TEST, spelled))).toBe(true);
    await memory.log.append([message(id)]);
    const after = await post(memory, tokens.alice, TEST, spelled);
    expect(hit(after)).toBe(false);
    expect(count(after)).toBe(3);
  });

  it("answers a hit in the type and bytes the request's Accept chose, as the miss was answered", async () => {
    const id = await started(memory.log, 'alice', 1, true);
    const accepts = [
      'application/graphql-response+json',
      'application/json;q=0.5, application/graphql-response+json',
      'application/json; callbackSpec=1.0',
      '*/*',
    ];
    for (const accept of accepts) {
      const first = await post(memory, tokens.alice, TEST, { id }, accept);
      const second = await post(memory, tokens.alice, TEST, { id }, accept);
      expect([first.status, hit(first), hit(second)]).toEqual([200, false, true]);
      expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(second.text).toBe(first.text);
    }
  });

  it('keeps no answer with errors, and no mutation', async () => {
    const refused = await post(memory, tokens.alice, `query { test(correlationId: "x") { nope } }`, {});
    const again = await post(memory, tokens.alice, `query { test(correlationId: "x") { nope } }`, {});
    expect(refused.status).toBe(400);
    expect(hit(again)).toBe(false);
    const start = `mutation { startTest(input: { name: "m" }) { correlationId } }`;
    const token = await mintToken({ sub: 'alice', scope: 'tests:read tests:write' }, { expiresInSeconds: 600 });
    const one = await post(memory, token, start, {});
    const two = await post(memory, token, start, {});
    expect(hit(two)).toBe(false);
    expect(two.text).not.toBe(one.text);
  });

  it('evicts the least recently used entry past its bound', async () => {
    const ids = await Promise.all([1, 2, 3].map(() => started(small.log, 'alice', 1, true)));
    for (const id of ids) await post(small, tokens.alice, TEST, { id });
    // Two entries at most: the first was evicted, the last two are served.
    expect(hit(await post(small, tokens.alice, TEST, { id: ids[2] }))).toBe(true);
    expect(hit(await post(small, tokens.alice, TEST, { id: ids[1] }))).toBe(true);
    expect(hit(await post(small, tokens.alice, TEST, { id: ids[0] }))).toBe(false);
  });
});

describe('response cache, tests that leave the store', () => {
  /** Reads `id` on `svc` until it is kept, then answers what a read gets once `leave` has run. */
  async function readAfter(svc: TestService, id: string, leave: () => Promise<unknown>): Promise<Raw> {
    await post(svc, tokens.alice, TEST, { id });
    expect(hit(await post(svc, tokens.alice, TEST, { id }))).toBe(true);
    await leave();
    return post(svc, tokens.alice, TEST, { id });
  }

  it("drops an entry when a test it read is evicted past the memory store's bounds", async () => {
    const id = await started(bounded.log, 'alice', 1, true);
    const after = await readAfter(bounded, id, async () => {
      // The store holds two tests: two more evict the first, which no change announces.
      for (let i = 0; i < 2; i++) await started(bounded.log, 'alice', 1, true);
      expect(await bounded.log.get(id)).toBeNull();
    });
    expect(hit(after)).toBe(false);
    expect(count(after)).toBeNull();
  });

  it('drops an entry when a test it read is removed (a start whose request could not be sent), in memory and on Redis', async () => {
    for (const svc of [memory, a]) {
      const id = await started(svc.log, 'alice', 1, true);
      const after = await readAfter(svc, id, async () => expect(await svc.log.remove(id)).toBe(true));
      expect(hit(after)).toBe(false);
      expect(count(after)).toBeNull();
    }
  });
});

describe('response cache, expiry', () => {
  it('keeps no entry past the expiry of a test it read, which no change announces', async () => {
    await onTimeline(async (timeline) => {
      const written = timeline.now();
      const id = await started(brief.log, 'alice', 1, true);
      const first = await post(brief, tokens.alice, TEST, { id });
      const second = await post(brief, tokens.alice, TEST, { id });
      // The second read is a hit only if it ended within the second the test lives after its write.
      timeline.within(written, 1000, 'the write and the two reads after it');
      expect(count(first)).toBe(1);
      expect(hit(second)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const expired = await post(brief, tokens.alice, TEST, { id });
      expect(hit(expired)).toBe(false);
      expect(count(expired)).toBeNull();
    });
  });
});

describe('response cache, while changes may be missed', () => {
  it('serves and keeps nothing while the change feed is not live, and forgets what it kept before', async () => {
    const id = await started(gated.log, 'alice', 1, true);
    await post(gated, tokens.alice, TEST, { id });
    expect(hit(await post(gated, tokens.alice, TEST, { id }))).toBe(true);
    delivery = { live: false, epoch: 1 };
    expect(hit(await post(gated, tokens.alice, TEST, { id }))).toBe(false);
    expect(hit(await post(gated, tokens.alice, TEST, { id }))).toBe(false);
    delivery = { live: true, epoch: 2 };
    // Back: the entry from before the loss is gone; a new one is kept.
    expect(hit(await post(gated, tokens.alice, TEST, { id }))).toBe(false);
    expect(hit(await post(gated, tokens.alice, TEST, { id }))).toBe(true);
  });
});

describe('response cache, two instances sharing Redis', () => {
  it('never answers a stale page on A after a message stored through B', async () => {
    const id = await started(b.log, 'alice', 5);
    for (let round = 0; round < 20; round++) {
      const before = await post(a, tokens.alice, TEST, { id });
      expect(count(before)).toBe(5 + round);
      expect(hit(await post(a, tokens.alice, TEST, { id }))).toBe(true);
      // A's change feed, opened after the cache's own subscription.
      const changes = await a.log.changes({ queueLimit: 100, canSee: () => true });
      const [stored] = await b.log.append([message(id)]);
      expect(stored?.outcome).toBe('inserted');
      let change: IteratorResult<TestChangeEvent>;
      do change = await changes.next();
      while (!change.done && change.value.test.correlationId !== id);
      await changes.return?.();
      const after = await post(a, tokens.alice, TEST, { id });
      expect(hit(after)).toBe(false);
      expect(count(after)).toBe(6 + round);
    }
  });

  it('forgets what it kept when its subscriber connection was lost, so a notice missed meanwhile cannot leave a stale page', async () => {
    const id = await started(b.log, 'alice', 1);
    expect(count(await post(c, tokens.alice, TEST, { id }))).toBe(1);
    expect(hit(await post(c, tokens.alice, TEST, { id }))).toBe(true);
    const before = c.log.changeDelivery?.().epoch ?? 0;
    connections.subscriber.disconnect(true);
    // Stored through B while C's subscriber is away: its notice may never reach C.
    await b.log.append([message(id)]);
    await eventually(() => (c.log.changeDelivery?.().epoch ?? 0) >= before + 2 && c.log.changeDelivery?.().live, 15_000, 'the subscriber to be back');
    const after = await post(c, tokens.alice, TEST, { id });
    expect(hit(after)).toBe(false);
    expect(count(after)).toBe(2);
    expect(hit(await post(c, tokens.alice, TEST, { id }))).toBe(true);
  });
});
