/**
 * Clients that do not play along cannot grow server memory without bound: one that stops reading
 * is cut off (over WebSocket and SSE), and a flood of subscribe messages is capped per connection. The figures printed are
 * the server process's memory around each case. The service runs without a broker (the pipeline's
 * harness).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { IncomingMessage as ResultMessage } from '../../src/domain/types.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { eventually } from '../support/graphql.js';
import { startPipelineService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';
import { incoming } from '../log/storage-contract.js';

const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 100_000 });
let svc: Awaited<ReturnType<typeof startPipelineService>>;
// The consumer's own seam (the memory broker side's `deliver`): what a consumed record does, without the broker in the way.
const record = (messages: readonly ResultMessage[]) => svc.memoryBroker.deliver(messages);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

beforeAll(async () => {
  svc = await startPipelineService({
    log: store,
    env: { SUBSCRIPTION_QUEUE_LIMIT: '200', WS_MAX_BUFFERED_BYTES: '1048576', WS_MAX_SUBSCRIPTIONS: '10' },
  });
});

afterAll(async () => {
  await svc?.stop();
  await store.dispose();
});

/** A raw graphql-ws connection, acknowledged. */
async function connect(): Promise<WebSocket> {
  const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${await defaultToken()}` } }));
  await new Promise((resolve) => ws.once('message', resolve));
  return ws;
}

/**
 * Records up to 3000 messages of 20 kB (60 MB) for the test's one subscriber, who reads nothing,
 * until the service drops it; returns how many were offered.
 */
async function offerUntilDropped(id: string): Promise<number> {
  const payload = 'x'.repeat(20_000);
  let pushed = 0;
  for (let sequence = 1; sequence <= 3000 && store.followers(id) > 0; sequence++) {
    await record([incoming(id, { sequence, payload })]);
    pushed += 1;
    if (sequence % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  await eventually(() => store.followers(id) === 0, 10_000, 'the subscriber to be dropped');
  return pushed;
}

describe('slow and abusive WebSocket clients', () => {
  it('cuts off a subscriber that stops reading, holding a bounded amount for it', async () => {
    const id = `slow-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'tester' });
    const ws = await connect();
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `subscription { testMessages(correlationId: "${id}") { sequence payload } }` } }));
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    // Stop reading from the TCP socket: the server's writes back up.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();

    global.gc?.();
    const before = process.memoryUsage();
    const pushed = await offerUntilDropped(id);
    // The store keeps its own copy of every message (as text); that is the store's, not the subscriber's.
    await store.remove(id);
    global.gc?.();
    const after = process.memoryUsage();
    console.log(
      `slow subscriber: offered ${pushed} messages (${mb(pushed * 20_000)}); heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)}, rss ${mb(before.rss)} → ${mb(after.rss)}`,
    );

    expect(pushed).toBeLessThan(3000); // cut off long before everything was offered
    // Reading again, the client finds what was sent before the cut, then the reason.
    const received: Array<{ type: string; payload?: unknown }> = [];
    ws.on('message', (data) => received.push(JSON.parse(String(data)) as { type: string; payload?: unknown }));
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const ended = await eventually(() => received.find((m) => m.type === 'error'), 15_000, 'the error message');
    expect(ended.payload).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'SUBSCRIBER_TOO_SLOW' }) })]);
    const delivered = received.filter((m) => m.type === 'next').length;
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(pushed);
    ws.close();
    // What the server holds for it is bounded by the queue and the socket buffer, not by what was offered.
    expect(after.heapUsed - before.heapUsed).toBeLessThan(pushed * 20_000);
  });

  it('caps a flood of subscribe messages at the per-connection limit', async () => {
    const id = `flood-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'tester' });
    const ws = await connect();
    const errors: string[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: Array<{ extensions?: { code?: string } }> };
      if (message.type === 'error') errors.push(message.payload?.[0]?.extensions?.code ?? '?');
    });
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 2000; i++) {
      ws.send(JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: `subscription { testMessages(correlationId: "${id}") { sequence } }` } }));
    }
    await eventually(() => errors.length === 1990, 15_000, 'every subscription past the cap refused');
    console.log(`subscribe flood: 2000 sent, ${store.followers(id)} live, heap +${mb(process.memoryUsage().heapUsed - before)}`);
    expect(new Set(errors)).toEqual(new Set(['TOO_MANY_SUBSCRIPTIONS']));
    expect(store.followers(id)).toBe(10);
    ws.close();
    await eventually(() => store.followers(id) === 0, 5000, 'listeners released on close');
  });
});

describe('slow SSE clients', () => {
  it('cuts off an event stream that stops being read, then tells it why', async () => {
    const id = `slow-sse-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'tester' });
    const token = await defaultToken();
    const body = JSON.stringify({ query: `subscription { testMessages(correlationId: "${id}") { sequence payload } }` });
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(
        `${svc.url}/graphql`,
        { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` } },
        resolve,
      );
      req.once('error', reject);
      req.end(body);
    });
    expect(response.statusCode).toBe(200);
    // Stop reading: the server's writes back up.
    response.pause();
    response.socket.pause();
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    const pushed = await offerUntilDropped(id);
    expect(pushed).toBeLessThan(3000);
    // Reading again, the client finds what was sent before the cut, then the reason, then the end.
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.socket.resume();
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    await store.remove(id);
    const events = text.split('\n\n').filter((e) => e.startsWith('id:') || e.startsWith('event:'));
    const delivered = events.filter((e) => e.startsWith('id:')).length;
    console.log(`slow SSE subscriber: offered ${pushed} messages (${mb(pushed * 20_000)}), ${delivered} delivered before the cut`);
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(pushed);
    expect(events.at(-2)).toContain('SUBSCRIBER_TOO_SLOW');
    expect(events.at(-1)).toMatch(/^event: complete/);
  });
});
