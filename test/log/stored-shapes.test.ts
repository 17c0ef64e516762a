/**
 * What is accepted can be served back: a start input or a result payload nested past the shape
 * limits (`JSON_MAX_DEPTH`…) is refused at its door (INPUT_TOO_DEEP at a start, over REST and
 * GraphQL; malformed, counted and dead-lettered at ingest), so the owner's reads, lists and
 * followers and other tests' results go on. A service on a mock cluster over TCP, on the memory
 * store and on the local Redis. And a value stored before the limits existed (written into Redis
 * directly) is skipped and counted on every read, never failing the test's read or its owner's list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { startMockClusterService, type MockClusterService } from '../support/mock-service.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { defaultToken } from '../support/tokens.js';

const redisLogs = useRedisLogs('rcs-stored-shapes');
/** JSON text of arrays nested `depth` deep: the input of the probe, far under 64 KiB. */
const deepText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const READ = `query($id: ID!) { test(correlationId: $id) { input messageCount messages { nodes { sequence payload } } } }`;
const LIST = `query { recentTests(first: 100) { nodes { correlationId input } } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload } }`;

const stores = [
  ['memory', () => ({})],
  ['redis', () => ({ log: redisLogs.createLog() })],
] as const;

describe.each(stores)('stored values on the %s store', (label, extra) => {
  let svc: MockClusterService;
  let producer: TestProducer;
  let token: string;
  beforeAll(async () => {
    svc = await startMockClusterService(`stored-shapes-${label}`, { ...extra(), env: { KAFKA_DEAD_LETTER_TOPIC: `dead-${label}-${process.pid}` } });
    await svc.ready();
    producer = await createTestProducer(svc.cluster.bootstrapServers);
    token = await defaultToken();
  }, 60_000);
  afterAll(async () => {
    await producer?.disconnect();
    await svc?.stop();
  });

  const get = (path: string) => fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const startRest = (body: string) =>
    fetch(`${svc.url}/tests`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  const startGraphQL = (parametersText: string) =>
    fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"query":"mutation($p: JSON) { startTest(input: { name: \\"deep\\", parameters: $p }) { correlationId } }","variables":{"p":${parametersText}}}`,
    });
  const metric = async (line: RegExp) => Number(line.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1] ?? 0);

  it("refuses a start input of 20,000 levels with 413 INPUT_TOO_DEEP over REST and GraphQL, and the owner's list still reads", async () => {
    const rest = await startRest(`{"name":"deep","parameters":${deepText(20_000)}}`);
    expect(rest.status).toBe(413);
    expect(await rest.json()).toMatchObject({ code: 'INPUT_TOO_DEEP' });
    const graphql = await startGraphQL(deepText(20_000));
    const body = (await graphql.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(body.errors?.[0]?.extensions?.code).toBe('INPUT_TOO_DEEP');
    // Just past the default limit (64) is refused too; at it, accepted and served back.
    expect((await startRest(`{"name":"d","parameters":${deepText(64)}}`)).status).toBe(413);
    const fits = await startRest(`{"name":"d","parameters":${deepText(63)}}`);
    expect(fits.status).toBe(202);
    const { correlationId } = (await fits.json()) as { correlationId: string };
    expect((await get(`/tests/${correlationId}`)).status).toBe(200);
    const list = await postGraphQL(svc.url, LIST, undefined, { token });
    expect(list.status).toBe(200);
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data?.recentTests.nodes.some((node: { correlationId: string }) => node.correlationId === correlationId)).toBe(true);
  });

  it('counts and dead-letters a payload of 50,000 levels; the test, its follower and other tests go on', async () => {
    const started = await postGraphQL(svc.url, `mutation { startTest(input: { name: "payloads" }) { correlationId } }`, undefined, { token });
    const id = started.body.data?.startTest.correlationId as string;
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
    const follower = collect<{ testMessages: { sequence: number } }>(client, FOLLOW, { id });
    const malformedBefore = await metric(/^rcs_records_total\{outcome="malformed"\} (\d+)/m);
    const deadBefore = await metric(/^rcs_records_total\{outcome="dead_lettered"\} (\d+)/m);
    const deep = result(id, { sequence: 2 });
    await producer.send(svc.topics.results, [
      result(id, { sequence: 1, payload: { ok: 1 } }),
      { ...deep, value: `{"correlationId":"${id}","sequence":2,"payload":${deepText(50_000)}}` },
      result(id, { sequence: 3, payload: { ok: 3 }, final: true, status: 'completed' }),
    ]);
    await follower.done;
    await client.dispose();
    expect(follower.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 3]);
    expect(await metric(/^rcs_records_total\{outcome="malformed"\} (\d+)/m)).toBe(malformedBefore + 1);
    await eventually(async () => expect(await metric(/^rcs_records_total\{outcome="dead_lettered"\} (\d+)/m)).toBe(deadBefore + 1));
    const read = await postGraphQL(svc.url, READ, { id }, { token });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data?.test.messages.nodes).toEqual([
      { sequence: 1, payload: { ok: 1 } },
      { sequence: 3, payload: { ok: 3 } },
    ]);
    expect((await get(`/tests/${id}`)).status).toBe(200);
    // Another test's results arrive at once after it.
    const other = await postGraphQL(svc.url, `mutation { startTest(input: { name: "other" }) { correlationId } }`, undefined, { token });
    const otherId = other.body.data?.startTest.correlationId as string;
    await producer.send(svc.topics.results, [result(otherId, { sequence: 1, payload: 'fine' })]);
    await eventually(async () => expect((await postGraphQL(svc.url, READ, { id: otherId }, { token })).body.data?.test.messageCount).toBe(1));
  });

  it.runIf(label === 'redis')('skips and counts a stored input and payload nested too deep to serve (stored before the limits existed)', async () => {
    const started = await startRest(`{"name":"old"}`);
    const { correlationId: id } = (await started.json()) as { correlationId: string };
    await producer.send(svc.topics.results, [result(id, { sequence: 1, payload: 'a' }), result(id, { sequence: 2, payload: 'b' })]);
    // Read through the log, not the API: the API's response cache would answer later reads.
    await eventually(async () => expect((await svc.log.getMany([id]))[0]?.messageCount).toBe(2));
    // What an older release could have written: an input and a payload 20,000 levels deep.
    const redis = redisLogs.connect();
    const base = `${redisLogs.prefix}:{${id}}`;
    await redis.hset(`${base}:meta`, 'input', deepText(20_000));
    const [first] = (await redis.lrange(`${base}:msgs`, 0, 0)) as [string];
    await redis.lset(`${base}:msgs`, 0, first.replace('"payload":"a"', `"payload":${deepText(20_000)}`));
    const unreadableBefore = await metric(/^rcs_stored_messages_unreadable_total (\d+)/m);
    const read = await postGraphQL(svc.url, READ, { id }, { token });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data?.test.input).toBeNull();
    expect(read.body.data?.test.messages.nodes).toEqual([{ sequence: 2, payload: 'b' }]);
    expect((await get(`/tests/${id}`)).status).toBe(200);
    const list = await postGraphQL(svc.url, LIST, undefined, { token });
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data?.recentTests.nodes.find((node: { correlationId: string }) => node.correlationId === id)).toEqual({ correlationId: id, input: null });
    const client = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
    const follower = collect<{ testMessages: { sequence: number } }>(client, FOLLOW, { id });
    await follower.waitFor(1);
    expect(follower.results.map((r) => r.data?.testMessages.sequence)).toEqual([2]);
    await client.dispose();
    expect(await metric(/^rcs_stored_messages_unreadable_total (\d+)/m)).toBeGreaterThan(unreadableBefore);
  });
});
