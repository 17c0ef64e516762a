/**
 * Clients that do not play along cannot grow server memory: one that stops reading is paused (over
 * WebSocket and SSE), holding nothing but its socket's buffer, and caught up from the store when it
 * reads again, missing nothing; a flood of subscribe messages is capped per connection. The figures printed are
 * the server process's memory around each case. The service runs without a broker (the pipeline's
 * harness).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage as ResultMessage } from '../../src/domain/types.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { eventually } from '../support/graphql.js';
import { openRawSocket } from '../support/raw-socket.js';
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
const connect = async () => (await openRawSocket(svc.url, await defaultToken())).ws;

/** Memory the service's process holds: its heap and the buffers outside it (socket writes). */
const held = async () => {
  // What was let go of (a closed socket's buffers, a removed test) is freed first.
  await new Promise((resolve) => setTimeout(resolve, 100));
  global.gc?.();
  global.gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
};

/**
 * Records `count` messages of 20 kB for the test's one subscriber, who reads nothing; returns the
 * memory the process holds beyond what it held before, and the bytes offered.
 */
async function offerWhileNotRead(id: string, count: number): Promise<{ grown: number; offered: number }> {
  const payload = 'x'.repeat(20_000);
  const before = await held();
  for (let sequence = 1; sequence <= count; sequence++) {
    await record([incoming(id, { sequence, payload })]);
    if (sequence % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  return { grown: (await held()) - before, offered: count * payload.length };
}

const OFFERED = 1500;

/** What the process grows by when the same messages go to a test nobody follows: the store's copy (then dropped). */
async function offerToNobody(): Promise<number> {
  const id = `nobody-${Date.now()}`;
  await store.create({ correlationId: id, input: null, owner: 'tester' });
  const { grown } = await offerWhileNotRead(id, OFFERED);
  await store.remove(id);
  return grown;
}

describe('slow and abusive WebSocket clients', () => {
  it('pauses a subscriber that stops reading, holding nothing for it beyond its socket buffer, and gives it every message once it reads again', async () => {
    const id = `slow-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'tester' });
    const ws = await connect();
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `subscription { testMessages(correlationId: "${id}") { sequence payload } }` } }));
    await eventually(() => store.followers(id) === 1, 5000, 'the subscription');
    // Stop reading from the TCP socket: the server's writes back up.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const control = await offerToNobody();
    const { grown, offered } = await offerWhileNotRead(id, OFFERED);
    // Paused: it no longer follows the test, so nothing is queued for it (it catches up from the store).
    expect(store.followers(id)).toBe(0);
    console.log(
      `slow subscriber: offered ${OFFERED} messages (${mb(offered)}); the process grew ${mb(grown)}, ${mb(control)} for the same to a test nobody follows (the store's copy)`,
    );
    // Beyond the store's copy: the socket's buffer (1 MiB here) and the heap's noise, where a queue of its frames would hold another copy.
    expect(grown - control).toBeLessThan(offered / 4);
    // Reading again, the client gets every message, in order, once; then the subscription is live again.
    const sequences: number[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: { data?: { testMessages?: { sequence: number } } } };
      if (message.type === 'next') sequences.push(message.payload?.data?.testMessages?.sequence ?? -1);
    });
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await eventually(() => sequences.length === OFFERED, 30_000, 'every message');
    await record([incoming(id, { sequence: OFFERED + 1, payload: 'live again' })]);
    await eventually(() => sequences.length === OFFERED + 1, 5000, 'the live message');
    expect(sequences).toEqual(Array.from({ length: OFFERED + 1 }, (_, i) => i + 1));
    ws.close();
    await store.remove(id);
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
  it('pauses an event stream that stops being read, holding nothing for it beyond its buffer, and gives it every message once it reads again', async () => {
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
    const control = await offerToNobody();
    const { grown, offered } = await offerWhileNotRead(id, OFFERED);
    expect(store.followers(id)).toBe(0);
    console.log(
      `slow SSE subscriber: offered ${OFFERED} messages (${mb(offered)}); the process grew ${mb(grown)}, ${mb(control)} for the same to a test nobody follows (the store's copy)`,
    );
    expect(grown - control).toBeLessThan(offered / 4);
    // Reading again: every message, in order, once, each named by its cursor; the final one ends the stream.
    await record([incoming(id, { sequence: OFFERED + 1, payload: 'the end', final: true })]);
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.socket.resume();
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    await store.remove(id);
    const events = text.split('\n\n').filter((e) => e.startsWith('id:') || e.startsWith('event:'));
    const sequences = events
      .filter((e) => e.startsWith('id:'))
      .map((e) => (JSON.parse(e.slice(e.indexOf('data: ') + 6)) as { data: { testMessages: { sequence: number } } }).data.testMessages.sequence);
    expect(sequences).toEqual(Array.from({ length: OFFERED + 1 }, (_, i) => i + 1));
    expect(events.at(-1)).toMatch(/^event: complete/);
  });
});
