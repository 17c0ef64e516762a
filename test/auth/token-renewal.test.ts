/**
 * Renewing the access token on an open graphql-ws socket (a `ping` whose payload carries the new
 * token), with real HS256 tokens over real graphql-ws clients and results produced to the broker.
 */
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { collect, createWsClient, eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, result, type TestProducer } from '../support/kafka.js';
import { startMockClusterService, type MockClusterService } from '../support/mock-service.js';
import { mintToken } from '../support/tokens.js';

let svc: MockClusterService;
let producer: TestProducer;

beforeAll(async () => {
  svc = await startMockClusterService('renewal', { env: { AUTH_CLOCK_TOLERANCE_SECONDS: '0' } });
  producer = await createTestProducer(svc.cluster.bootstrapServers);
  await svc.ready();
});

afterAll(async () => {
  await producer?.disconnect();
  await svc?.stop();
});

const CLIENT = 'dashboard';
const START = `mutation { startTest(input: { name: "renewed" }) { correlationId } }`;
const FOLLOW = `subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }`;
const token = (claims: Record<string, unknown> = {}, expiresInSeconds = 300, secret?: string) =>
  mintToken({ sub: 'tester', client_id: CLIENT, scope: 'tests:read tests:write', ...claims }, { expiresInSeconds, ...(secret ? { secret } : {}) });
const expOf = (jwt: string) => (JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as { exp: number }).exp;
const sleepUntil = (epochMs: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())));

async function startTest(): Promise<string> {
  const response = await postGraphQL(svc.url, START, undefined, { token: await token() });
  return response.body.data?.startTest.correlationId as string;
}

/** A client on `first`, with its socket once acknowledged and how it closed. */
async function connect(first: string) {
  const state: { socket?: WebSocket; closed?: { code: number; reason: string }; token: string } = { token: first };
  const client = createWsClient(svc.url, {
    connectionParams: () => ({ authorization: `Bearer ${state.token}` }),
    onConnected: (socket) => (state.socket = socket),
    onClose: (event) => (state.closed = event),
  });
  return { client, state };
}

/** Sends the renewal message and resolves with the pong's payload. */
function renew(client: Client, socket: WebSocket, jwt: string): Promise<unknown> {
  return new Promise((resolve) => {
    const off = client.on('pong', (received, payload) => {
      if (!received) return;
      off();
      resolve(payload);
    });
    socket.send(JSON.stringify({ type: 'ping', payload: { authorization: `Bearer ${jwt}` } }));
  });
}

describe('token renewal on a live WebSocket', () => {
  it('moves the deadline: the socket and its subscription outlive the first token, with no gap', async () => {
    const id = await startTest();
    const first = await token({}, 3);
    const { client, state } = await connect(first);
    const sub = collect(client, FOLLOW, { id });
    const socket = await eventually(() => state.socket, 5000, 'connection_ack');
    await producer.send(svc.topics.results, [result(id, { sequence: 0 })]);
    await sub.waitFor(1);

    const fresh = await token({}, 60);
    const pong = await renew(client, socket, fresh);
    expect(pong).toEqual({ renewed: true, expiresAt: expOf(fresh) * 1000 });
    expect(JSON.stringify(pong)).not.toContain(fresh);

    await sleepUntil(expOf(first) * 1000 + 1000);
    expect(state.closed).toBeUndefined();
    await producer.send(svc.topics.results, [result(id, { sequence: 1 })]);
    await sub.waitFor(2);
    expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([0, 1]);
    await client.dispose();
  });

  it('keeps a subscription over several token lifetimes with the client pattern of docs/authentication.md (renew ahead of exp, on every pong)', async () => {
    const id = await startTest();
    const { client, state } = await connect(await token({}, 2));
    let renewal: NodeJS.Timeout | undefined;
    let renewals = 0;
    const schedule = () => {
      clearTimeout(renewal);
      const send = async () => {
        state.token = await token({}, 2);
        state.socket?.send(JSON.stringify({ type: 'ping', payload: { authorization: `Bearer ${state.token}` } }));
      };
      renewal = setTimeout(() => void send(), Math.max(0, expOf(state.token) * 1000 - Date.now() - 800));
    };
    const off = client.on('pong', (received, payload) => {
      if (!received || !(payload as { renewed?: boolean } | undefined)?.renewed) return;
      renewals++;
      schedule();
    });
    const sub = collect(client, FOLLOW, { id });
    await eventually(() => state.socket, 5000, 'connection_ack');
    schedule();
    const until = Date.now() + 5000;
    for (let sequence = 0; Date.now() < until; sequence++) {
      await producer.send(svc.topics.results, [result(id, { sequence })]);
      await sub.waitFor(sequence + 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    clearTimeout(renewal);
    off();
    expect(state.closed).toBeUndefined();
    expect(renewals).toBeGreaterThanOrEqual(3);
    await client.dispose();
  });

  it.each([
    { name: 'another subject', claims: { sub: 'mallory' }, reason: 'Forbidden: the renewed token is for another subject or client' },
    { name: 'another client', claims: { client_id: 'other-app' }, reason: 'Forbidden: the renewed token is for another subject or client' },
    { name: 'an expired token', claims: {}, expiresIn: -60, reason: /^Forbidden: Access token refused: .*expired/ },
    { name: 'a token signed with another key', claims: {}, secret: 'another-secret-of-at-least-thirty-two-bytes', reason: /^Forbidden: Access token refused/ },
  ])('closes the socket with 4403 for $name, ending its subscriptions', async ({ claims, expiresIn, secret, reason }) => {
    const id = await startTest();
    const { client, state } = await connect(await token());
    const sub = collect(client, FOLLOW, { id });
    const socket = await eventually(() => state.socket, 5000, 'connection_ack');
    socket.send(JSON.stringify({ type: 'ping', payload: { authorization: `Bearer ${await token(claims, expiresIn ?? 60, secret)}` } }));
    await expect(sub.done).rejects.toBeDefined();
    expect(state.closed?.code).toBe(4403);
    expect(state.closed?.reason).toMatch(reason);
    await client.dispose();
  });

  it('a renewal too late finds the socket closed at the deadline (4403), the client reconnects with a fresh token and misses nothing', async () => {
    const id = await startTest();
    const first = await token({}, 2);
    const { client, state } = await connect(first);
    const sub = collect(client, FOLLOW, { id });
    const socket = await eventually(() => state.socket, 5000, 'connection_ack');

    await sleepUntil(expOf(first) * 1000 + 500);
    await expect(sub.done).rejects.toBeDefined();
    expect(state.closed).toEqual({ code: 4403, reason: 'Forbidden: access token expired' });
    expect(socket.readyState).toBe(WebSocket.CLOSED);
    // The late renewal cannot reach the server any more.
    const sent = await new Promise<Error | undefined>((resolve) =>
      socket.send(JSON.stringify({ type: 'ping', payload: { authorization: `Bearer ${first}` } }), resolve),
    );
    expect(sent).toBeInstanceOf(Error);

    // Published while the client was away: the new subscription replays it.
    await producer.send(svc.topics.results, [result(id, { sequence: 0 })]);
    state.token = await token({}, 60);
    state.closed = undefined;
    const again = collect(client, FOLLOW, { id });
    await again.waitFor(1);
    expect(again.results[0]?.data?.testMessages.sequence).toBe(0);
    expect(state.closed).toBeUndefined();
    await client.dispose();
  });

  it('applies the renewed scopes to operations started after it; running ones go on', async () => {
    const id = await startTest();
    const { client, state } = await connect(await token());
    const running = collect(client, FOLLOW, { id });
    const socket = await eventually(() => state.socket, 5000, 'connection_ack');
    expect(await renew(client, socket, await token({ scope: 'tests:write' }, 60))).toMatchObject({ renewed: true });

    const refused = collect(client, FOLLOW, { id });
    const errors = (await refused.done.then(
      () => refused.results.flatMap((r) => r.errors ?? []),
      (e: unknown) => e,
    )) as Array<{ extensions?: Record<string, unknown> }>;
    expect(errors[0]?.extensions?.code).toBe('FORBIDDEN');

    await producer.send(svc.topics.results, [result(id, { sequence: 0 })]);
    await running.waitFor(1);
    expect(state.closed).toBeUndefined();
    await client.dispose();
  });

  it('answers a ping without a token with a pong that echoes nothing, and closes a renewal before the acknowledgement with 4401', async () => {
    const url = `${svc.url.replace('http', 'ws')}/graphql`;
    const open = async () => {
      const raw = new WebSocket(url, 'graphql-transport-ws');
      await new Promise((resolve) => raw.once('open', resolve));
      return raw;
    };
    const plain = await open();
    plain.send(JSON.stringify({ type: 'ping', payload: { at: 1 } }));
    // Echoed, a client that pings and never reads would fill its own send buffer on the server.
    expect(JSON.parse(String(await new Promise((resolve) => plain.once('message', resolve))))).toEqual({ type: 'pong' });
    plain.close();

    const early = await open();
    early.send(JSON.stringify({ type: 'ping', payload: { authorization: `Bearer ${await token()}` } }));
    const [code] = (await new Promise((resolve) => early.once('close', (c, r) => resolve([c, String(r)])))) as [number, string];
    expect(code).toBe(4401);
  });
});
