/**
 * A subscription that fails, at setup or in the middle of its stream, ends alone: on every
 * subscription transport it ends with its error (masked, with the request id its log line has, when
 * unexpected; with its own code when the service raised it), and the connection and the other
 * subscriptions on it carry on, also over a real Redis log that goes down and comes back.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestChangeEvent, TestMessage } from '../../src/domain/types.js';
import { loadConfig } from '../../src/config/config.js';
import { ServiceError } from '../../src/base/errors.js';
import type { FollowOptions, ResultLog } from '../../src/log/result-log.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { incoming, uniqueId } from '../log/storage-contract.js';
import { collect, createSseClient, createWsClient, eventually, subscriptionTransports, type ClientErrors, type Collected } from '../support/graphql.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

const topics = uniqueTopics('subfail');
let cluster: MockCluster;
let svc: TestService;
/** The same, with GRAPHQL_DEBUG_ERRORS on. */
let debug: TestService;
const logLines: string[] = [];

const SECRET = 'connection reset by secret-host:6379';

/** An iterator whose every `next` rejects with `error`, as a source that breaks at once does. */
function failingIterator<T>(error: Error): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    next: () => Promise.reject(error),
    return: async () => ({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** Hands on the real stream's first message, then fails with `error`, as a log that breaks mid-stream does. */
function failingAfterFirst(stream: AsyncIterableIterator<TestMessage>, error: Error): AsyncIterableIterator<TestMessage> {
  let delivered = 0;
  const iterator: AsyncIterableIterator<TestMessage> = {
    next: async () => {
      if (delivered++ === 0) return stream.next();
      await stream.return?.();
      throw error;
    },
    return: async () => (await stream.return?.()) ?? { value: undefined, done: true },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** The real stream, whose `return` (ending it early) fails, as a log that breaks while unsubscribing does. */
function failingReturn(stream: AsyncIterableIterator<TestMessage>): AsyncIterableIterator<TestMessage> {
  const iterator: AsyncIterableIterator<TestMessage> = {
    next: () => stream.next(),
    return: async () => {
      await stream.return?.();
      throw new Error(SECRET);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/**
 * A log whose `follow` breaks for tests named after a failure: `not-iterable` resolves to no stream
 * at all (as a subscription field without its resolver does), `first-next` gives a stream that
 * fails at once, `store-down` one that fails with STORE_UNAVAILABLE, `mid-stream` and
 * `mid-stream-store` ones that fail after their first message, `return-fails` one that fails when
 * ended early.
 */
function breaking(store: ResultLog): ResultLog {
  const follow = async (id: string, options: FollowOptions): Promise<AsyncIterableIterator<TestMessage>> => {
    if (id.startsWith('not-iterable')) return undefined as unknown as AsyncIterableIterator<TestMessage>;
    if (id.startsWith('first-next')) return failingIterator(new Error(SECRET));
    if (id.startsWith('store-down')) return failingIterator(new ServiceError('STORE_UNAVAILABLE', 'The result store is unavailable.'));
    if (id.startsWith('mid-stream-store'))
      return failingAfterFirst(await store.follow(id, options), new ServiceError('STORE_UNAVAILABLE', 'The result store is unavailable.'));
    if (id.startsWith('mid-stream')) return failingAfterFirst(await store.follow(id, options), new Error(SECRET));
    if (id.startsWith('return-fails')) return failingReturn(await store.follow(id, options));
    return store.follow(id, options);
  };
  // The change feed's source breaks at once, as Redis going down under it does.
  const changes = async () => failingIterator<TestChangeEvent>(new ServiceError('STORE_UNAVAILABLE', 'The result store is unavailable.'));
  return { ...store, follow, changes };
}

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
  svc = await startTestService({
    brokers: cluster.bootstrapServers,
    env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: topics.group, NODE_ENV: 'production' },
    wrapLog: breaking,
    logger: pino({ level: 'error' }, { write: (line: string) => void logLines.push(line) }),
  });
  debug = await startTestService({
    brokers: cluster.bootstrapServers,
    env: {
      KAFKA_RESULTS_TOPIC: topics.results,
      KAFKA_REQUESTS_TOPIC: topics.requests,
      KAFKA_GROUP_ID: `${topics.group}-debug`,
      NODE_ENV: 'production',
      GRAPHQL_DEBUG_ERRORS: 'true',
    },
    wrapLog: breaking,
  });
});

afterAll(async () => {
  await debug?.stop();
  await svc?.stop();
  await cluster?.stop();
});

const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload } }';
type Pushed = { testMessages: { sequence: number | null; payload: unknown } };

async function storedTest(label: string): Promise<string> {
  const id = uniqueId(label);
  await svc.log.create({ correlationId: id, input: null, owner: 'tester' });
  await svc.log.append([incoming(id, { sequence: 1, payload: 'stored' })]);
  return id;
}

/** The errors a subscription ended with: an `error` message (graphql-ws), or its last result's (SSE). */
async function endingErrors(sub: Collected<unknown>): Promise<ClientErrors> {
  return sub.done.then(
    () => sub.results.flatMap((result) => (result as { errors?: ClientErrors }).errors ?? []),
    (errors: unknown) => errors as ClientErrors,
  );
}

/** The log lines of unexpected errors that name `requestId`. */
const loggedWith = (requestId: unknown) => logLines.filter((line) => line.includes(`"requestId":"${String(requestId)}"`));

describe.each(subscriptionTransports)('a failing subscription over $name', (transport) => {
  /** Runs a failing operation beside a healthy subscription on one client: the errors it ends with. */
  async function besideHealthy(query: string, variables?: Record<string, unknown>): Promise<ClientErrors> {
    const client = transport.client(svc.url);
    const healthyId = await storedTest('healthy');
    const healthy = collect<Pushed>(client, FOLLOW, { id: healthyId });
    await healthy.waitFor(1);
    const errors = await endingErrors(collect(client, query, variables));
    // The healthy one still gets what is stored after its neighbour failed.
    await svc.log.append([incoming(healthyId, { sequence: 2, payload: 'after the failure' })]);
    await healthy.waitFor(2);
    expect(healthy.results.map((r) => r.data?.testMessages.payload)).toEqual(['stored', 'after the failure']);
    healthy.unsubscribe();
    await client.dispose();
    return errors;
  }

  it.each(['not-iterable', 'first-next'])('ends a subscription whose setup fails unexpectedly (%s) with a masked error, and logs it', async (label) => {
    const errors = await besideHealthy(FOLLOW, { id: uniqueId(label) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String) } });
    expect(JSON.stringify(errors)).not.toContain('secret-host');
    expect(JSON.stringify(errors)).not.toContain('Async Iterable');
    expect(errors[0]?.extensions).not.toHaveProperty('unexpected');
    await eventually(() => loggedWith(errors[0]?.extensions?.requestId).length === 1, 5_000, 'the log line with the request id');
  });

  it('shows what failed, and where, with GRAPHQL_DEBUG_ERRORS', async () => {
    const errors = await transport.errors(debug.url, FOLLOW, { id: uniqueId('not-iterable') });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/^Subscription field must return Async Iterable/);
    expect(errors[0]?.extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String), stacktrace: expect.any(Array) });
  });

  it("ends a subscription whose stream fails at once with a service error with that error's code", async () => {
    const errors = await besideHealthy(FOLLOW, { id: uniqueId('store-down') });
    expect(errors).toEqual([expect.objectContaining({ message: 'The result store is unavailable.', extensions: { code: 'STORE_UNAVAILABLE' } })]);
  });

  it('ends a change feed whose store is down with STORE_UNAVAILABLE', async () => {
    const errors = await besideHealthy('subscription { testChanges { kind } }');
    expect(errors).toEqual([expect.objectContaining({ extensions: { code: 'STORE_UNAVAILABLE' } })]);
  });

  it.each([
    { label: 'mid-stream', code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' },
    { label: 'mid-stream-store', code: 'STORE_UNAVAILABLE', message: 'The result store is unavailable.' },
  ])('ends a subscription whose stream fails after its first message ($label) with $code', async ({ label, code, message }) => {
    const failing = await storedTest(label);
    const client = transport.client(svc.url);
    const healthyId = await storedTest('healthy');
    const healthy = collect<Pushed>(client, FOLLOW, { id: healthyId });
    const broken = collect<Pushed>(client, FOLLOW, { id: failing });
    await healthy.waitFor(1);
    const errors = await endingErrors(broken);
    expect(broken.results[0]?.data?.testMessages.payload).toBe('stored');
    expect(errors).toEqual([expect.objectContaining({ message, extensions: expect.objectContaining({ code }) })]);
    expect(JSON.stringify(errors)).not.toContain('secret-host');
    if (code === 'INTERNAL_SERVER_ERROR') expect(loggedWith(errors[0]?.extensions?.requestId)).toHaveLength(1);
    await svc.log.append([incoming(healthyId, { sequence: 2, payload: 'after the failure' })]);
    await healthy.waitFor(2);
    healthy.unsubscribe();
    await client.dispose();
  });
});

describe.each(subscriptionTransports)('a subscription that fails to end over $name', (transport) => {
  it('is ended when its client unsubscribes, and the other subscriptions carry on', async () => {
    const client = transport.client(svc.url);
    const healthyId = await storedTest('healthy');
    const healthy = collect<Pushed>(client, FOLLOW, { id: healthyId });
    const failing = collect<Pushed>(client, FOLLOW, { id: await storedTest('return-fails') });
    await Promise.all([healthy.waitFor(1), failing.waitFor(1)]);
    const closeFailures = () => logLines.filter((line) => line.includes('failed to close') && line.includes('secret-host')).length;
    const before = closeFailures();
    failing.unsubscribe();
    await eventually(() => svc.log.followers() === 1, 5_000, 'the unsubscribed follower to be closed, and only it');
    // Reported, under the service's logger, for whoever runs it.
    await eventually(() => closeFailures() === before + 1, 5_000, 'the failure to be logged');
    await svc.log.append([incoming(healthyId, { sequence: 2, payload: 'after the failure' })]);
    await healthy.waitFor(2);
    healthy.unsubscribe();
    await client.dispose();
  });
});

describe('a failing subscription over graphql-ws', () => {
  it('ends with an error message, never by closing the socket', async () => {
    const closes: Array<{ code: number; reason: string }> = [];
    const client = createWsClient(svc.url, { onClose: (event) => closes.push(event) });
    const healthyId = await storedTest('healthy');
    const healthy = collect<Pushed>(client, FOLLOW, { id: healthyId });
    await healthy.waitFor(1);
    for (const label of ['not-iterable', 'first-next', 'store-down']) {
      const failing = collect(client, FOLLOW, { id: uniqueId(label) });
      // An error message rejects `done` with the errors; a closed socket would reject it with the close event.
      await expect(failing.done).rejects.toSatisfy((errors: unknown) => Array.isArray(errors) && errors.length === 1);
    }
    await svc.log.append([incoming(healthyId, { sequence: 2, payload: 'after the failures' })]);
    await healthy.waitFor(2);
    expect(closes).toEqual([]);
    healthy.unsubscribe();
    await client.dispose();
  });
});

describe('subscriptions over a Redis log that goes down', () => {
  let redis: PrivateRedis;
  let state: ConfiguredResultLog;
  let onRedis: TestService;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    state = createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'subfail' }), createSilentLogger());
    await eventually(() => state.log.check().then(() => true), 10_000, 'Redis to be usable');
    onRedis = await startTestService({
      brokers: cluster.bootstrapServers,
      env: {
        KAFKA_RESULTS_TOPIC: topics.results,
        KAFKA_REQUESTS_TOPIC: topics.requests,
        KAFKA_GROUP_ID: `${topics.group}-redis`,
        STATE_STORE: 'redis',
        REDIS_URL: redis.url,
      },
      log: state.log,
    });
  });

  afterAll(async () => {
    await onRedis?.stop();
    await state?.dispose();
    await redis?.stop();
  });

  it(
    'refuses new subscriptions with STORE_UNAVAILABLE on every transport while the open ones wait, and go on when it returns',
    { timeout: 60_000 },
    async () => {
      const id = uniqueId('outage');
      await onRedis.log.create({ correlationId: id, input: null, owner: 'tester' });
      await onRedis.log.append([incoming(id, { sequence: 1, payload: 'stored' })]);
      const closes: Array<{ code: number; reason: string }> = [];
      const clients = [createWsClient(onRedis.url, { onClose: (event) => closes.push(event) }), createSseClient(onRedis.url)];
      const open = clients.map((client) => collect<Pushed>(client, FOLLOW, { id }));
      await Promise.all(open.map((sub) => sub.waitFor(1)));

      await redis.kill();
      for (const client of clients) {
        const errors = await endingErrors(collect(client, FOLLOW, { id }));
        expect(errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'STORE_UNAVAILABLE' }) })]);
      }
      await redis.restart();
      await eventually(() => onRedis.log.check().then(() => true), 10_000, 'Redis to be back');
      await onRedis.log.append([incoming(id, { sequence: 2, payload: 'after the outage' })]);
      await Promise.all(open.map((sub) => sub.waitFor(2)));
      for (const sub of open) expect(sub.results.map((r) => r.data?.testMessages.payload)).toEqual(['stored', 'after the outage']);
      expect(closes).toEqual([]);
      for (const sub of open) sub.unsubscribe();
      await Promise.all(clients.map((client) => client.dispose()));
    },
  );
});
