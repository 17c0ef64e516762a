/**
 * Resume cursors: every pushed message carries the cursor the `messages` connection gives, and
 * `testMessages(after:)` resumes exactly after it, on every subscription transport and over the
 * memory and the Redis log, across a disconnect in the middle of a live stream, for messages with
 * and without a sequence.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { IncomingMessage } from '../../src/domain/types.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig, type ConfiguredResultLog } from '../../src/app/result-log-from-config.js';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { incoming, storedTest as storeTest } from '../log/storage-contract.js';
import { collect, eventually, postGraphQL, subscriptionTransports, type ClientErrors } from '../support/graphql.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { startTestService, uniqueTopics, type TestService } from '../support/service.js';

const topics = uniqueTopics('resume');
const redisPrefix = `resume-${randomUUID().slice(0, 8)}`;
let cluster: MockCluster;

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
});

afterAll(async () => {
  await cluster?.stop();
  await deleteRedisKeys(`${redisPrefix}:*`);
});

const stores: ReadonlyArray<{ name: string; state: () => ConfiguredResultLog | undefined }> = [
  { name: 'memory', state: () => undefined },
  { name: 'Redis', state: () => createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix }), createSilentLogger()) },
];

describe.each(stores)('over the $name log', (store) => {
  let svc: TestService;
  let state: ConfiguredResultLog | undefined;

  beforeAll(async () => {
    state = store.state();
    const log = state?.log;
    // Redis connections open in the background.
    if (log !== undefined) await eventually(() => log.check().then(() => true), 10_000, 'Redis to be usable');
    svc = await startTestService({
      brokers: cluster.bootstrapServers,
      env: { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: `${topics.group}-${store.name}` },
      ...(state === undefined ? {} : { log: state.log }),
    });
  });

  afterAll(async () => {
    await svc?.stop();
    await state?.dispose();
  });

  const FOLLOW = `subscription($id: ID!, $after: String) { testMessages(correlationId: $id, after: $after) { cursor sequence payload final } }`;
  interface Pushed {
    readonly testMessages: { cursor: string; sequence: number | null; payload: unknown; final: boolean };
  }

  /** A test of the default token's subject (`tester`), with messages stored as if consumed. */
  const storedTest = (label: string, messages: ReadonlyArray<Partial<IncomingMessage>>) => storeTest(svc.log, label, messages);
  const append = (id: string, fields: Partial<IncomingMessage>) => svc.log.append([incoming(id, fields)]);

  describe('cursors over HTTP', () => {
    it('gives each message the cursor of its edge, and pages after it, sequenced or not', async () => {
      const id = await storedTest('http-cursor', [{ payload: 'a' }, { sequence: 1, payload: 'b' }, { payload: 'c' }]);
      const page = await postGraphQL(
        svc.url,
        `query($id: ID!, $after: String) { test(correlationId: $id) { messages(after: $after) { edges { cursor node { cursor payload } } } } }`,
        { id },
      );
      const edges = page.body.data?.test.messages.edges as Array<{ cursor: string; node: { cursor: string; payload: string } }>;
      expect(edges.map((e) => e.node.payload)).toEqual(['a', 'b', 'c']);
      for (const edge of edges) expect(edge.node.cursor).toBe(edge.cursor);
      const rest = await postGraphQL(
        svc.url,
        `query($id: ID!, $after: String) { test(correlationId: $id) { messages(after: $after) { nodes { payload } } } }`,
        { id, after: edges[0]?.cursor },
      );
      expect(rest.body.data?.test.messages.nodes).toEqual([{ payload: 'b' }, { payload: 'c' }]);
    });

    it("refuses another test's cursor with BAD_USER_INPUT, even where the key matches", async () => {
      const a = await storedTest('foreign-a', [{ sequence: 1 }, { sequence: 2 }]);
      const b = await storedTest('foreign-b', [{ sequence: 1 }, { sequence: 2 }]);
      const page = await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { messages { edges { cursor } } } }`, { id: a });
      const foreign = page.body.data?.test.messages.edges[0].cursor as string;
      const response = await postGraphQL(
        svc.url,
        `query($id: ID!, $after: String) { test(correlationId: $id) { messages(after: $after) { nodes { sequence } } } }`,
        { id: b, after: foreign },
      );
      expect(response.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
    });
  });

  describe.each(subscriptionTransports)('resuming over $name', (transport) => {
    it('pushes the cursor the messages connection gives', async () => {
      const id = await storedTest('pushed-cursor', [{ payload: 'a' }, { sequence: 1, final: true }]);
      const client = transport.client(svc.url);
      const sub = collect<Pushed>(client, FOLLOW, { id });
      await sub.done;
      await client.dispose();
      const page = await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { messages { edges { cursor } } } }`, { id });
      expect(sub.results.map((r) => r.data?.testMessages.cursor)).toEqual(page.body.data?.test.messages.edges.map((e: { cursor: string }) => e.cursor));
    });

    it('resumes exactly when a message arrives late and sorts before the last one received', async () => {
      // Sequence 5 arrives before 4: the subscriber receives 1, 2, 3, 5, then leaves.
      const id = await storedTest('late-arrival', [{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }, { sequence: 5 }]);
      const first = transport.client(svc.url);
      const before = collect<Pushed>(first, FOLLOW, { id });
      await before.waitFor(4);
      before.unsubscribe();
      await first.dispose();
      expect(before.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3, 5]);
      // 4 arrives late, then the final one; resuming after 5's cursor gets both, 4 included.
      await append(id, { sequence: 4 });
      await append(id, { sequence: 6, final: true });
      const second = transport.client(svc.url);
      const after = collect<Pushed>(second, FOLLOW, { id, after: before.results.at(-1)?.data?.testMessages.cursor });
      await after.done;
      await second.dispose();
      expect(after.results.map((r) => r.data?.testMessages.sequence)).toEqual([4, 6]);
    });

    it('loses nothing and repeats nothing across a disconnect in the middle of a live stream, with and without sequences', async () => {
      const id = await storedTest('resume', [{ payload: 'stored-1' }, { sequence: 1, payload: 'stored-2' }]);
      const first = transport.client(svc.url);
      const before = collect<Pushed>(first, FOLLOW, { id });
      await before.waitFor(2);
      await append(id, { payload: 'live-1' });
      await append(id, { sequence: 2, payload: 'live-2' });
      await before.waitFor(4);
      // The connection goes away while the test is still running; more results arrive meanwhile.
      // What the client holds is what it received until it stopped listening (a message already in
      // flight may still land before the socket closes): it resumes after the last of those.
      before.unsubscribe();
      const received = [...before.results];
      await first.dispose();
      for (const fields of [{ payload: 'gap-1' }, { sequence: 3, payload: 'gap-2' }, { payload: 'gap-3' }]) await append(id, fields);
      expect(before.results).toEqual(received);
      const last = received.at(-1)?.data?.testMessages.cursor;
      const second = transport.client(svc.url);
      const after = collect<Pushed>(second, FOLLOW, { id, after: last });
      await after.waitFor(3);
      await append(id, { payload: 'after-1' });
      await append(id, { sequence: 4, payload: 'after-2', final: true });
      await after.done;
      await second.dispose();
      const payloads = [...received, ...after.results].map((r) => r.data?.testMessages.payload);
      expect(payloads).toEqual(['stored-1', 'stored-2', 'live-1', 'live-2', 'gap-1', 'gap-2', 'gap-3', 'after-1', 'after-2']);
    });

    it('refuses a malformed cursor, and one of another test, with BAD_USER_INPUT', async () => {
      const other = await storedTest('other', [{ sequence: 1 }]);
      const id = await storedTest('mine', [{ sequence: 1 }]);
      const page = await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { messages { edges { cursor } } } }`, { id: other });
      for (const after of ['not a cursor', page.body.data?.test.messages.edges[0].cursor as string]) {
        const errors: ClientErrors = await transport.errors(svc.url, FOLLOW, { id, after });
        expect(errors[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
      }
    });

    it('refuses to resume a test that is gone with CURSOR_EXPIRED, never a silent fresh start', async () => {
      const id = await storedTest('gone', [{ sequence: 1 }, { sequence: 2 }]);
      const page = await postGraphQL(svc.url, `query($id: ID!) { test(correlationId: $id) { messages { edges { cursor } } } }`, { id });
      const cursor = page.body.data?.test.messages.edges[0].cursor as string;
      await svc.log.remove(id);
      const errors: ClientErrors = await transport.errors(svc.url, FOLLOW, { id, after: cursor });
      expect(errors[0]?.extensions).toMatchObject({ code: 'CURSOR_EXPIRED', argument: 'after' });
    });
  });
});
