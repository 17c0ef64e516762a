/**
 * Delivery a client can count on, in-band, over graphql-ws and graphql-sse alike: a subscription
 * asks for a delivery guarantee in its `extensions` and its first push confirms what it got (or it
 * is refused with a typed error); a subscriber that fell behind is told, push by push, that it is
 * catching up and how far, and when it is live again. The service runs without a broker.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import { incoming, storedTest as storeTest } from '../log/storage-contract.js';
import { collect, eventually, subscriptionTransports } from '../support/graphql.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { openRawSocket } from '../support/raw-socket.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startPipelineService({ env: { WS_MAX_BUFFERED_BYTES: '65536', WS_DRAIN_TIMEOUT_MS: '60000' } });
});
afterAll(async () => {
  await svc?.stop();
});

const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload } }';
interface Pushed {
  readonly testMessages: { sequence: number; payload: unknown };
}

const storedTest = (label: string, messages: ReadonlyArray<Partial<IncomingMessage>> = []) => storeTest(svc.log, label, messages);

describe.each(subscriptionTransports)('a delivery guarantee over $name', (transport) => {
  it('confirms what it granted on the first push only, and tells where messages are kept', async () => {
    const id = await storedTest('guarantee', [{ sequence: 1 }, { sequence: 2 }]);
    const client = transport.client(svc.url);
    const sub = collect<Pushed>(client, { query: FOLLOW, extensions: { deliveryGuarantee: 'at-least-once' } }, { id });
    await sub.waitFor(2);
    await svc.log.append([incoming(id, { sequence: 3, final: true })]);
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3]);
    expect(sub.results[0]?.extensions).toEqual({ delivery: { guarantee: 'at-least-once', store: 'memory', durable: 'none' } });
    expect(sub.results.slice(1).map((r) => r.extensions)).toEqual([undefined, undefined]);
  });

  it('says nothing when none is asked for', async () => {
    const id = await storedTest('no-guarantee', [{ sequence: 1, final: true }]);
    const client = transport.client(svc.url);
    const sub = collect<Pushed>(client, FOLLOW, { id });
    await sub.done;
    await client.dispose();
    expect(sub.results[0]?.extensions).toBeUndefined();
  });

  it('refuses a guarantee it does not know, and one it cannot keep, with a typed error rather than serving without it', async () => {
    const id = await storedTest('refused');
    const unknown = await transport.errors(svc.url, { query: FOLLOW, extensions: { deliveryGuarantee: 'exactly-once' } }, { id });
    expect(unknown[0]?.extensions).toMatchObject({ code: 'DELIVERY_GUARANTEE_UNSUPPORTED' });
    const changes = await transport.errors(svc.url, { query: 'subscription { testChanges { kind } }', extensions: { deliveryGuarantee: 'at-least-once' } });
    expect(changes[0]?.extensions).toMatchObject({ code: 'DELIVERY_GUARANTEE_UNSATISFIABLE' });
  });
});

// The same through the schema, for a client whose gateway forwards neither a request's nor a
// response's extensions (Apollo Router, Cosmo): the argument asks, the `delivery` field tells.
const FOLLOW_NOTED = `subscription($id: ID!, $guarantee: DeliveryGuarantee) {
  testMessages(correlationId: $id, deliveryGuarantee: $guarantee) { sequence delivery { guarantee store durable catchingUp behind live } }
}`;
interface NotedPush {
  readonly testMessages: { sequence: number; delivery: Record<string, unknown> | null };
}

describe.each(subscriptionTransports)('a delivery guarantee in the schema over $name', (transport) => {
  it("is asked for by the argument and confirmed in the first push's delivery field, and in its extensions", async () => {
    const id = await storedTest('guarantee-in-schema', [{ sequence: 1 }, { sequence: 2, final: true }]);
    const client = transport.client(svc.url);
    const sub = collect<NotedPush>(client, FOLLOW_NOTED, { id, guarantee: 'AT_LEAST_ONCE' });
    await sub.done;
    await client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.delivery)).toEqual([
      { guarantee: 'AT_LEAST_ONCE', store: 'memory', durable: 'none', catchingUp: false, behind: null, live: false },
      null,
    ]);
    expect(sub.results[0]?.extensions).toEqual({ delivery: { guarantee: 'at-least-once', store: 'memory', durable: 'none' } });
  });

  it('tells each subscriber its own note, under the aliases it chose, beside one of the same operation that asked nothing', async () => {
    const id = await storedTest('guarantee-shared', [{ sequence: 1 }]);
    const client = transport.client(svc.url);
    const query =
      'subscription($id: ID!) { m: testMessages(correlationId: $id, deliveryGuarantee: AT_MOST_ONCE) { sequence note: delivery { g: guarantee } } }';
    const plain = 'subscription($id: ID!) { m: testMessages(correlationId: $id) { sequence note: delivery { g: guarantee } } }';
    const asked = collect<{ m: { sequence: number; note: unknown } }>(client, query, { id });
    const other = collect<{ m: { sequence: number; note: unknown } }>(client, plain, { id });
    await Promise.all([asked.waitFor(1), other.waitFor(1)]);
    await svc.log.append([incoming(id, { sequence: 2, final: true })]);
    await Promise.all([asked.done, other.done]);
    await client.dispose();
    expect(asked.results.map((r) => r.data?.m)).toEqual([
      { sequence: 1, note: { g: 'AT_MOST_ONCE' } },
      { sequence: 2, note: null },
    ]);
    expect(other.results.map((r) => r.data?.m)).toEqual([
      { sequence: 1, note: null },
      { sequence: 2, note: null },
    ]);
  });

  it('refuses two guarantees that differ, and a value the enum does not know, with typed errors', async () => {
    const id = await storedTest('guarantee-twice');
    const twice = await transport.errors(
      svc.url,
      { query: FOLLOW_NOTED, extensions: { deliveryGuarantee: 'at-most-once' } },
      { id, guarantee: 'AT_LEAST_ONCE' },
    );
    expect(twice[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'deliveryGuarantee' });
    const unknown = await transport.errors(svc.url, { query: FOLLOW_NOTED }, { id, guarantee: 'EXACTLY_ONCE' });
    // Refused as the same value in the extensions is, before the variables are coerced.
    expect(unknown[0]?.extensions).toMatchObject({ code: 'DELIVERY_GUARANTEE_UNSUPPORTED' });
  });
});

describe('a subscriber that falls behind', () => {
  /** The `extensions.delivery` of each push a raw WebSocket received, in order. */
  function notesOf(frames: string[]): Array<Record<string, unknown> | undefined> {
    return frames.map((frame) => (JSON.parse(frame) as { payload: { extensions?: { delivery?: Record<string, unknown> } } }).payload.extensions?.delivery);
  }

  /**
   * Follows a new test with `query` over a raw WebSocket that stops reading while 40 messages of
   * 40 kB arrive (over its 64 kB mark: the subscriber is paused), then reads again and gets one live
   * message: the `next` frames it received, in order.
   */
  async function fallBehindOverWebSocket(label: string, query: string): Promise<string[]> {
    const id = await storedTest(label);
    const { ws } = await openRawSocket(svc.url, await defaultToken());
    const frames: string[] = [];
    ws.on('message', (data) => {
      const text = String(data);
      if (text.includes('"type":"next"')) frames.push(text);
    });
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables: { id } } }));
    await eventually(() => svc.log.followers(id) === 1, 5000, 'the subscription');
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let sequence = 1; sequence <= 40; sequence++) await svc.log.append([incoming(id, { sequence, payload: 'x'.repeat(40_000) })]);
    await eventually(() => svc.log.followers(id) === 0, 5000, 'the subscriber paused');
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await eventually(() => frames.length === 40, 15_000, 'every message');
    await svc.log.append([incoming(id, { sequence: 41, payload: 'live', final: true })]);
    await eventually(() => frames.length === 41, 5000, 'the live message');
    ws.close();
    return frames;
  }

  it('over WebSocket: is told it is catching up, how far behind, and when it is live again', async () => {
    const notes = notesOf(await fallBehindOverWebSocket('behind', FOLLOW));
    const caughtUp = notes.map((note, i) => [i + 1, note] as const).filter(([, note]) => note?.catchingUp === true);
    // Some pushes came before the pause, without a note; the catch-up counts down to 0; then live.
    expect(caughtUp.length).toBeGreaterThan(0);
    expect(caughtUp.map(([, note]) => note?.behind)).toEqual(caughtUp.map((_, i) => caughtUp.length - 1 - i));
    expect(caughtUp.at(-1)?.[0]).toBe(40);
    expect(notes[40]).toEqual({ live: true });
    expect(notes.slice(0, (caughtUp[0]?.[0] ?? 1) - 1).every((note) => note === undefined)).toBe(true);
  });

  it('over WebSocket, in the schema: the same notes in the delivery field of each pushed message', async () => {
    const query = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload delivery { catchingUp behind live } } }';
    const frames = await fallBehindOverWebSocket('behind-in-schema', query);
    const inData = frames.map(
      (frame) =>
        (JSON.parse(frame) as { payload: { data: { testMessages: { delivery: Record<string, unknown> | null } } } }).payload.data.testMessages.delivery,
    );
    const inExtensions = notesOf(frames);
    const caughtUp = inData.filter((note) => note?.catchingUp === true);
    expect(caughtUp.length).toBeGreaterThan(0);
    expect(caughtUp.map((note) => note?.behind)).toEqual(caughtUp.map((_, i) => caughtUp.length - 1 - i));
    expect(inData[40]).toEqual({ catchingUp: false, behind: null, live: true });
    // The field says what the extensions say, push by push.
    expect(inData.map((note) => note !== null)).toEqual(inExtensions.map((note) => note !== undefined));
  });

  it('over SSE: the same notes on the catch-up events', async () => {
    const id = await storedTest('behind-sse');
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      void defaultToken().then((token) => {
        const req = request(
          `${svc.url}/graphql`,
          { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` } },
          resolve,
        );
        req.once('error', reject);
        req.end(JSON.stringify({ query: FOLLOW, variables: { id } }));
      });
    });
    response.pause();
    response.socket.pause();
    await eventually(() => svc.log.followers(id) === 1, 5000, 'the subscription');
    for (let sequence = 1; sequence <= 40; sequence++) await svc.log.append([incoming(id, { sequence, payload: 'x'.repeat(40_000) })]);
    await eventually(() => svc.log.followers(id) === 0, 5000, 'the subscriber paused');
    await svc.log.append([incoming(id, { sequence: 41, payload: 'live', final: true })]);
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.socket.resume();
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    const events = text
      .split('\n\n')
      .filter((e) => e.includes('event: next'))
      .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as { data: Pushed; extensions?: { delivery?: { catchingUp?: boolean; behind?: number } } });
    expect(events.map((e) => e.data.testMessages.sequence)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    const caughtUp = events.filter((e) => e.extensions?.delivery?.catchingUp === true);
    expect(caughtUp.length).toBeGreaterThan(0);
    expect(caughtUp.at(-1)?.extensions?.delivery?.behind).toBe(0);
  });
});

const redis = useRedisLogs('delivery');

/**
 * A service whose tests the test makes expire when it says (not on a timer that a loaded machine
 * could beat before the subscriptions are open): memory, on a clock the test moves on, swept every
 * 100 ms; Redis, by taking the test's keys away, as their expiry does, found by tails that check
 * every 200 ms.
 */
async function expiringService(store: 'memory' | 'redis') {
  if (store === 'memory') {
    let skew = 0;
    const log = createMemoryResultLog({ ttlSeconds: 60, maxTests: 1000, maxMessagesPerTest: 100, now: () => Date.now() + skew, sweepIntervalMs: 100 });
    return { svc: await startPipelineService({ log }), expire: async () => void (skew += 61_000) };
  }
  const keys = redis.connect();
  const svc = await startPipelineService({ log: redis.createLog({ ttlSeconds: 60, expiryCheckMs: 200 }) });
  return { svc, expire: async (id: string) => void (await keys.del(`${redis.prefix}:{${id}}:meta`, `${redis.prefix}:{${id}}:msgs`)) };
}

// On Redis the keys expire without a word: the tails find the test gone by asking for it.
describe.each(['memory', 'redis'] as const)('a test that expires while followed (%s store)', (store) => {
  let short: TestService;
  let expire: (id: string) => Promise<void>;
  beforeAll(async () => {
    ({ svc: short, expire } = await expiringService(store));
  });
  afterAll(async () => {
    await short?.stop();
  });

  it.each(subscriptionTransports)('ends its subscriptions over $name with TEST_EXPIRED, after what they were given, shared or alone', async (transport) => {
    const id = await storeTest(short.log, 'expires', [{ sequence: 1 }]);
    const client = transport.client(short.url);
    // Two of the same operation share one group of the hub; a third with other fields follows alone.
    const subs = [
      collect<Pushed>(client, FOLLOW, { id }),
      collect<Pushed>(client, FOLLOW, { id }),
      collect<Pushed>(client, 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', { id }),
    ];
    const ends = subs.map((sub) =>
      sub.done.then(
        () => 'completed',
        (error: unknown) => error,
      ),
    );
    await Promise.all(subs.map((sub) => sub.waitFor(1)));
    await expire(id);
    // Within a check interval the test is found gone, and every stream says so.
    const ended = await Promise.all(ends);
    await client.dispose();
    for (const [i, end] of ended.entries()) {
      const results = subs[i]?.results ?? [];
      // graphql-ws sends an `error` message; graphql-sse a last `next` event with the error, then `complete`.
      const errors = (end === 'completed' ? results.at(-1)?.errors : Array.isArray(end) ? end : [end]) as Array<{ extensions?: Record<string, unknown> }>;
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'TEST_EXPIRED', reason: 'expired' });
      expect(results.filter((r) => r.errors === undefined).map((r) => r.data?.testMessages.sequence)).toEqual([1]);
    }
    expect(short.log.followers(id)).toBe(0);
  });
});
