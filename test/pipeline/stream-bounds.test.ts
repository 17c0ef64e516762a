/**
 * Streams end when they must, and a client that stops reading holds server memory for a bounded
 * time: a WebSocket or an SSE stream over its buffer limit for `WS_DRAIN_TIMEOUT_MS` is cut (its
 * subscriptions, paused meanwhile, hold nothing but that buffer); an SSE
 * stream whose token expires while it waits for its client ends at the expiry with the expiry
 * error, without one more message and without staying open on a quiet test; and one principal
 * holds at most `WS_MAX_CONNECTIONS` sockets open at once. The services run without a broker (the
 * pipeline's harness): results reach them through the consumer's handler.
 */
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import type { IncomingMessage as ResultMessage } from '../../src/domain/types.js';
import { incoming } from '../log/storage-contract.js';
import { eventually } from '../support/graphql.js';
import { rawSocketOrClose } from '../support/raw-socket.js';
import { startPipelineService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 100_000 });
const DRAIN_MS = 1000;
let svc: Awaited<ReturnType<typeof startPipelineService>>;
/** Results as the consumer hands them to the service (both services here share `store`). */
const record = (messages: readonly ResultMessage[]) => svc.memoryBroker.deliver(messages);

beforeAll(async () => {
  svc = await startPipelineService({
    log: store,
    // A queue limit no test reaches: what cuts a client here is the drain bound alone.
    env: { WS_DRAIN_TIMEOUT_MS: String(DRAIN_MS), WS_MAX_CONNECTIONS: '3', WS_MAX_BUFFERED_BYTES: '65536', SUBSCRIPTION_QUEUE_LIMIT: '100000' },
  });
});
afterAll(async () => {
  await svc?.stop();
  await store.dispose();
});

const token = (sub: string, expiresInSeconds = 300) => mintToken({ sub }, { expiresInSeconds });
const subscription = (id: string) => `subscription { testMessages(correlationId: "${id}") { sequence payload } }`;

/** An acknowledged graphql-ws connection, or the close code it got instead. */
async function connect(bearer: string): Promise<WebSocket | number> {
  const answer = await rawSocketOrClose(svc.url, bearer);
  return typeof answer === 'number' ? answer : answer.ws;
}

/** An SSE subscription's response, not yet read. */
function openStream(bearer: string, query: string, url = svc.url): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/graphql`,
      { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${bearer}` } },
      resolve,
    );
    req.once('error', reject);
    req.end(JSON.stringify({ query }));
  });
}

/** Offers messages of `bytes` each to a test until its one follower is gone (or `max` were offered). */
async function offerWhileFollowed(id: string, bytes: number, max: number): Promise<number> {
  let offered = 0;
  while (offered < max && store.followers(id) > 0) {
    await record([incoming(id, { sequence: ++offered, payload: 'x'.repeat(bytes) })]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return offered;
}

describe('a client that stops reading', () => {
  it('is cut off over WebSocket once over its buffer limit for the drain bound, whatever its queue allows', async () => {
    const id = `ws-drain-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'drain' });
    const ws = (await connect(await token('drain'))) as WebSocket;
    const closed = new Promise<number>((resolve) => ws.once('close', resolve));
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: subscription(id) } }));
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const started = Date.now();
    // 100 kB a message, up to 50 MB: past what the kernel's socket buffers take, far less than the queue limit.
    const offered = await offerWhileFollowed(id, 100_000, 500);
    // Over its mark, the subscriber is paused (it no longer follows the test); past the drain bound,
    // still not read, the socket is cut.
    await eventually(() => store.followers(id) === 0, 10_000, 'the subscriber paused');
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS + 1000));
    const heldFor = Date.now() - started;
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect([1008, 1006]).toContain(await closed);
    console.log(`WebSocket not read: cut after ${heldFor} ms, ${offered} messages offered`);
    expect(offered).toBeLessThan(500);
  });

  it('is cut off over SSE once over its buffer limit for the drain bound', async () => {
    const id = `sse-drain-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'drain' });
    const response = await openStream(await token('drain'), subscription(id));
    expect(response.statusCode).toBe(200);
    response.pause();
    response.socket.pause();
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    const closed = new Promise((resolve) => response.socket.once('close', resolve));
    const offered = await offerWhileFollowed(id, 100_000, 500);
    await eventually(() => store.followers(id) === 0, 10_000, 'the subscriber paused');
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS + 1000));
    response.socket.resume();
    response.resume();
    await closed;
    expect(offered).toBeLessThan(500);
  });
});

describe('an SSE stream whose token expires while its client is not reading', () => {
  it('ends at the expiry with the expiry error: no further message, even on a quiet test', async () => {
    // A drain bound longer than the token's life: here the expiry ends the stream, not the bound.
    // No clock tolerance: the stream ends at the token's own `exp`.
    const patient = await startPipelineService({
      log: store,
      env: { WS_DRAIN_TIMEOUT_MS: '60000', WS_MAX_BUFFERED_BYTES: '65536', SUBSCRIPTION_QUEUE_LIMIT: '100000', AUTH_CLOCK_TOLERANCE_SECONDS: '0' },
    });
    const id = `sse-expiry-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'expiring' });
    const bearer = await token('expiring', 4);
    const expiresAt = (JSON.parse(Buffer.from(bearer.split('.')[1] as string, 'base64url').toString()) as { exp: number }).exp * 1000;
    const response = await openStream(bearer, subscription(id), patient.url);
    expect(response.statusCode).toBe(200);
    response.pause();
    response.socket.pause();
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    // One message larger than the buffer limit and what the kernel's socket buffers take (a
    // loopback receive buffer may grow to 32 MB) puts the response over the limit: the subscriber
    // is paused, and the next ones wait in the store for it to read again.
    await record([incoming(id, { sequence: 1, payload: 'x'.repeat(64 * 1024 * 1024) })]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await record([incoming(id, { sequence: 2, payload: 'taken' })]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await record([incoming(id, { sequence: 3, payload: 'after' })]);
    // Past the expiry (the test then stays quiet).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 500));
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    const ended = new Promise((resolve) => response.once('end', resolve));
    response.socket.resume();
    response.resume();
    await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`the stream stayed open; it sent: ${text.slice(-300)}`)), 5000))]);
    const events = text.split('\n\n').filter((e) => e.startsWith('id:') || e.startsWith('event:'));
    expect(events.filter((e) => e.startsWith('id:')).length).toBe(1);
    expect(text).not.toContain('"taken"');
    expect(text).not.toContain('"after"');
    expect(events.at(-2)).toContain('UNAUTHENTICATED');
    expect(events.at(-1)).toMatch(/^event: complete/);
    await patient.stop();
  });
});

describe('WebSockets per principal', () => {
  it('holds at most WS_MAX_CONNECTIONS open at once per principal, and gives a slot back on close', async () => {
    const bearer = await token('many');
    const open = [await connect(bearer), await connect(bearer), await connect(bearer)];
    expect(open.every((socket) => socket instanceof WebSocket)).toBe(true);
    expect(await connect(bearer)).toBe(4429);
    // Another principal is not counted against this one.
    const other = await connect(await token('other'));
    expect(other).toBeInstanceOf(WebSocket);
    const first = open[0] as WebSocket;
    await new Promise((resolve) => (first.once('close', resolve), first.close()));
    const again = await eventually(
      async () => {
        const socket = await connect(bearer);
        return socket instanceof WebSocket ? socket : undefined;
      },
      5000,
      'a slot given back',
    );
    for (const socket of [...open.slice(1), other, again]) (socket as WebSocket).close();
  });
});
