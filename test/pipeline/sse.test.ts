/**
 * GraphQL over SSE on /graphql (Accept: text/event-stream), with graphql-sse's own client and a raw
 * fetch stream reader: replay then live, event ids that are the message cursors, Last-Event-ID
 * resuming across a disconnect, the same authentication, scopes, ownership, limits and caps as
 * the WebSocket, and the cut-off at token expiry with a late renewal that loses nothing. The
 * services run without a broker (the pipeline's harness): results are appended to their logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import { incoming, storedTest as storeTest, uniqueId } from '../log/storage-contract.js';
import { collect, createSseClient, eventually, openEventStream, sseErrors } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken, mintToken } from '../support/tokens.js';

const ORIGIN = 'https://dashboard.example';
let svc: TestService;

beforeAll(async () => {
  svc = await startPipelineService({
    env: { SSE_MAX_STREAMS: '2', GRAPHQL_MAX_DEPTH: '4', AUTH_CLOCK_TOLERANCE_SECONDS: '1', CORS_ALLOWED_ORIGINS: ORIGIN },
  });
});

afterAll(() => svc?.stop());

const FOLLOW = `subscription($id: ID!, $after: String) { testMessages(correlationId: $id, after: $after) { cursor sequence payload final } }`;
interface Pushed {
  readonly testMessages: { cursor: string; sequence: number | null; payload: unknown; final: boolean };
}

/** A test of `owner`, with messages stored as if consumed. */
const storedTest = (label: string, messages: ReadonlyArray<Partial<IncomingMessage>> = [], owner = 'tester') => storeTest(svc.log, label, messages, owner);
const append = (id: string, fields: Partial<IncomingMessage>) => svc.log.append([incoming(id, fields)]);
const payloadsOf = (events: ReadonlyArray<{ event: string; data: any }>) =>
  events.filter((e) => e.event === 'next').map((e) => e.data.data.testMessages.payload);

describe('subscriptions over SSE', () => {
  it("replays, then pushes live, then completes after the final message, with graphql-sse's client", async () => {
    const id = await storedTest('client', [{ sequence: 1, payload: 'stored' }]);
    const client = createSseClient(svc.url);
    const sub = collect<Pushed>(client, FOLLOW, { id });
    await sub.waitFor(1);
    await append(id, { payload: 'live, unsequenced' });
    await append(id, { sequence: 2, payload: 'final', final: true });
    await sub.done;
    client.dispose();
    expect(sub.results.map((r) => r.data?.testMessages.payload)).toEqual(['stored', 'live, unsequenced', 'final']);
    await eventually(() => svc.log.followers(id) === 0, 5000, 'the follower to end');
  });

  it('names every message event after its cursor, in a raw fetch stream, and serves queries too', async () => {
    const id = await storedTest('raw', [{ payload: 'a' }, { sequence: 1, payload: 'b', final: true }]);
    const stream = await openEventStream(svc.url, FOLLOW, { id });
    await stream.ended;
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.events.map((e) => e.event)).toEqual(['next', 'next', 'complete']);
    for (const event of stream.events.slice(0, 2)) expect(event.id).toBe(event.data.data.testMessages.cursor);
    const query = await openEventStream(svc.url, '{ __typename }');
    await query.ended;
    expect(query.events.map((e) => [e.event, e.id, e.data])).toEqual([
      ['next', undefined, { data: { __typename: 'Query' } }],
      ['complete', undefined, null],
    ]);
    // GET with the operation in the URL, as the protocol allows (the token still goes in the header).
    const get = await fetch(`${svc.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${await defaultToken()}` },
    });
    expect(get.status).toBe(200);
    expect(await get.text()).toBe(':\n\nevent: next\ndata: {"data":{"__typename":"Query"}}\n\nevent: complete\ndata:\n\n');
  });

  it('resumes with Last-Event-ID after a disconnect in the middle of a live stream: nothing lost, nothing repeated', async () => {
    const id = await storedTest('last-event-id', [{ payload: 'stored-1' }, { sequence: 1, payload: 'stored-2' }]);
    const first = await openEventStream(svc.url, FOLLOW, { id, after: null });
    await first.waitFor(2);
    await append(id, { payload: 'live-1' });
    await append(id, { sequence: 2, payload: 'live-2' });
    await first.waitFor(4);
    first.close();
    await first.ended;
    const received = [...first.events];
    await eventually(() => svc.log.followers(id) === 0, 5000, 'the dropped stream to let go of its follower');
    for (const fields of [{ payload: 'gap-1' }, { sequence: 3, payload: 'gap-2' }, { payload: 'gap-3' }]) await append(id, fields);
    // The reconnect repeats the first request (its variables too), as EventSource and graphql-sse do, plus Last-Event-ID.
    const second = await openEventStream(svc.url, FOLLOW, { id, after: null }, { lastEventId: received.at(-1)?.id as string });
    await second.waitFor(3);
    await append(id, { sequence: 4, payload: 'after', final: true });
    await second.ended;
    expect([...payloadsOf(received), ...payloadsOf(second.events)]).toEqual(['stored-1', 'stored-2', 'live-1', 'live-2', 'gap-1', 'gap-2', 'gap-3', 'after']);
  });

  it('ends the stream at token expiry with UNAUTHENTICATED; reconnecting later with a fresh token and Last-Event-ID loses nothing', async () => {
    const id = await storedTest('expiry', [{ payload: 'before' }]);
    const shortLived = await mintToken({}, { expiresInSeconds: 2 });
    const started = Date.now();
    const expiring = createSseClient(svc.url, { token: shortLived });
    const sub = collect<Pushed>(expiring, FOLLOW, { id });
    await sub.waitFor(1);
    await append(id, { payload: 'live' });
    await sub.done;
    expiring.dispose();
    // 2 s of lifetime plus 1 s of clock tolerance, then the stream ends with the reason.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(sub.results.at(-1)?.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED', reason: 'the token has expired' });
    const delivered = sub.results.filter((r) => r.data != null);
    const lastEventId = delivered.at(-1)?.data?.testMessages.cursor;
    // The renewal comes late: results arrived while no stream was open.
    await append(id, { payload: 'while expired' });
    const renewed = createSseClient(svc.url, {
      token: await mintToken(),
      headers: (): Record<string, string> => (lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
    });
    const resumed = collect<Pushed>(renewed, FOLLOW, { id });
    await resumed.waitFor(1);
    await append(id, { sequence: 9, payload: 'final', final: true });
    await resumed.done;
    renewed.dispose();
    expect([...delivered, ...resumed.results].map((r) => r.data?.testMessages.payload)).toEqual(['before', 'live', 'while expired', 'final']);
  });
});

describe('the same refusals as the WebSocket', () => {
  it('refuses a Last-Event-ID that is not a cursor of the test with a BAD_USER_INPUT error event', async () => {
    const id = await storedTest('bad-last-event-id', [{ sequence: 1 }]);
    const stream = await openEventStream(svc.url, FOLLOW, { id }, { lastEventId: 'not-a-cursor' });
    await stream.ended;
    expect(stream.events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(stream.events[0]?.data.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
  });

  it('refuses a missing token with 401 and a Bearer challenge, before any stream', async () => {
    const stream = await openEventStream(svc.url, FOLLOW, { id: 'x' }, { token: null });
    expect(stream.status).toBe(401);
    expect(stream.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('refuses a token without tests:read with 403 FORBIDDEN', async () => {
    const errors = await sseErrors(svc.url, FOLLOW, { id: 'x' }, await mintToken({ scope: 'tests:write' }));
    expect(errors.status).toBe(403);
    expect(errors[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScope: 'tests:read' });
  });

  it("answers another subject's test exactly like an unknown one: NOT_FOUND", async () => {
    const id = await storedTest('alice', [{ sequence: 1 }], 'alice');
    expect((await sseErrors(svc.url, FOLLOW, { id }))[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await sseErrors(svc.url, FOLLOW, { id: uniqueId('unknown') }))[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('refuses a document that does not parse, or goes too deep, before execution', async () => {
    const parse = await sseErrors(svc.url, 'subscription { testMessages(');
    expect(parse.status).toBe(400);
    expect(parse[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(await sseErrors(svc.url, `{ test(correlationId: "x") { messages { edges { node { id } } } } }`)).toEqual([]);
    const tooDeep = await sseErrors(svc.url, `mutation { startTest { test { messages { edges { node { id } } } } } }`);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', maxDepth: 4 });
  });

  it('caps the streams open at once per caller with TOO_MANY_SUBSCRIPTIONS, and frees a slot when one closes', async () => {
    const subject = uniqueId('capped');
    const id = await storedTest('cap', [], subject);
    const token = await mintToken({ sub: subject });
    const open = [await openEventStream(svc.url, FOLLOW, { id }, { token }), await openEventStream(svc.url, FOLLOW, { id }, { token })];
    expect(open.map((s) => s.status)).toEqual([200, 200]);
    const third = await sseErrors(svc.url, FOLLOW, { id }, token);
    expect(third.status).toBe(429);
    expect(third[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    // Another caller is not affected.
    const other = await openEventStream(svc.url, '{ __typename }');
    expect(other.status).toBe(200);
    open[0]?.close();
    await eventually(
      async () => {
        const next = await openEventStream(svc.url, FOLLOW, { id }, { token });
        next.close();
        return next.status === 200;
      },
      5000,
      'a slot to be free again',
    );
    open[1]?.close();
  });
});

describe('browsers', () => {
  it('lets an allowed origin send Authorization and Last-Event-ID (CORS preflight)', async () => {
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, last-event-id' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toEqual(expect.arrayContaining(['authorization', 'last-event-id']));
  });
});

describe('shutdown', () => {
  it('cuts open streams at once when the service drains, so their clients can resume elsewhere', async () => {
    const own = await startPipelineService();
    const id = uniqueId('stop');
    await own.log.create({ correlationId: id, input: null, owner: 'tester' });
    await own.log.append([incoming(id, { sequence: 1 })]);
    const stream = await openEventStream(own.url, FOLLOW, { id });
    await stream.waitFor(1);
    const started = Date.now();
    const stopping = own.stop();
    await stream.ended;
    // Well inside the HTTP drain's grace (half of SHUTDOWN_TIMEOUT_MS), which would otherwise wait for the stream.
    expect(Date.now() - started).toBeLessThan(1000);
    await stopping;
    expect(stream.events.map((e) => e.event)).toEqual(['next']);
  });
});
