/**
 * What an idle subscription holds in the service's heap, with its connection: a per-connection cost,
 * the one that decides how many dashboards a replica can hold (bench/README.md, "What one more idle
 * socket costs"). The service runs in a child process, its heap measured after full collections
 * and apart from the clients, which run here on raw connections: WebSockets, each acknowledged with
 * a bearer token, and SSE streams, each one request; every one holds one `testMessages`
 * subscription of one test that stays quiet.
 *
 * The bound is the class's guard, not one instance's: anything a socket or its subscription keeps
 * for its whole life (a token's text, a message's buffer, a key as a tree of string pieces, a
 * loader nobody uses) shows here, whichever file keeps it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request, type ClientRequest } from 'node:http';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../support/graphql.js';
import { openRawSocket } from '../support/raw-socket.js';
import { defaultToken } from '../support/tokens.js';

const serviceModule = fileURLToPath(new URL('../support/service.ts', import.meta.url));
const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }';

/** The child: the pipeline's service with one test of the default token's subject; `measure` on stdin answers its heap after full collections and the followers it counts. */
const script = `
  const { startPipelineService } = await import(${JSON.stringify(serviceModule)});
  // Silent: its stdout carries the lines this test reads.
  const running = await startPipelineService({ env: { LOG_LEVEL: 'silent', WS_MAX_CONNECTIONS: '10000', SSE_MAX_STREAMS: '10000' } });
  const id = ${JSON.stringify(randomUUID())};
  await running.log.create({ correlationId: id, input: null, owner: 'tester' });
  console.log(JSON.stringify({ url: running.url, id }));
  const { createInterface } = await import('node:readline');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== 'measure') continue;
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc(); gc();
    console.log(JSON.stringify({ heap: process.memoryUsage().heapUsed, followers: running.log.followers(id) }));
  }
  // Its stdin closed: the test is gone, whatever became of it.
  process.exit(0);
`;

const children: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const streams: ClientRequest[] = [];
/** Closes every connection opened and stops every service started so far. */
function cleanUp(): void {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const stream of streams.splice(0)) stream.destroy();
  for (const child of children.splice(0)) child.kill('SIGKILL');
}
afterAll(cleanUp);

/** Starts the child; answers its URL, its test and a way to measure it. */
async function startService(): Promise<{ url: string; id: string; measure(): Promise<{ heap: number; followers: number }> }> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines: Interface = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  // A child that exits (a crash at start) fails the wait instead of leaving it to the test's timeout.
  const exited = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`the service exited with ${code}`))));
  exited.catch(() => undefined);
  const next = () => Promise.race([new Promise<string>((resolve) => lines.once('line', resolve)), exited]);
  const { url, id } = JSON.parse(await next()) as { url: string; id: string };
  return {
    url,
    id,
    measure: async () => {
      const answer = next();
      child.stdin?.write('measure\n');
      return JSON.parse(await answer) as { heap: number; followers: number };
    },
  };
}

/** Opens `count` connections with `open`, a slice at a time. */
async function inSlices(count: number, open: () => Promise<void>): Promise<void> {
  for (let from = 0; from < count; from += 50) await Promise.all(Array.from({ length: Math.min(50, count - from) }, open));
}

/** Opens `count` WebSockets, each acknowledged and subscribed to `id`. */
async function overWebSockets(url: string, id: string, count: number): Promise<void> {
  const token = await defaultToken();
  await inSlices(count, async () => {
    const { ws: socket } = await openRawSocket(url, token);
    sockets.push(socket);
    socket.send(JSON.stringify({ id: randomUUID(), type: 'subscribe', payload: { query: FOLLOW, variables: { id } } }));
  });
}

/** Opens `count` SSE streams subscribed to `id`, each its own connection, once its response began. */
async function overEventStreams(url: string, id: string, count: number): Promise<void> {
  const token = await defaultToken();
  const agent = new Agent({ keepAlive: false });
  const body = JSON.stringify({ query: FOLLOW, variables: { id } });
  await inSlices(count, async () => {
    const stream = request(`${url}/graphql`, {
      method: 'POST',
      agent,
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    });
    streams.push(stream);
    await new Promise<void>((resolve, reject) => {
      stream.once('response', (response) => (response.statusCode === 200 ? resolve() : reject(new Error(`stream answered ${response.statusCode}`))));
      stream.once('error', reject);
      stream.end(body);
    });
  });
}

describe.each([
  // Measured 2026-11-29 (through tsx): a WebSocket 15.8 KB before what it kept for nothing went (the
  // listeners' wrappers, the token's text, a message's buffer, a key in pieces, an unused loader and
  // live channel, an empty channel standing for the subscription's end), 12.7 after; an SSE stream
  // 25.8 KB before, 22.3 after (its head in pieces too).
  { connection: 'a WebSocket', open: overWebSockets, bound: 14_000 },
  { connection: 'an SSE stream', open: overEventStreams, bound: 24_000 },
])('an idle subscription over $connection', ({ open, bound }) => {
  it(`holds under ${bound / 1000} KB of the service heap, its connection, its subscription and its follower included`, async () => {
    // Each case on its own service, stopped with its connections when the case ends.
    onTestFinished(cleanUp);
    const service = await startService();
    const live = async (followers: number) => {
      const measured = await eventually(
        async () => {
          const now = await service.measure();
          if (now.followers !== followers) throw new Error(`${now.followers} of ${followers} subscriptions live`);
          return now;
        },
        30_000,
        'every subscription live',
      );
      return measured.heap;
    };
    // Warm-up connections first, so one-time costs (code, caches) are not charged to the measured ones.
    await open(service.url, service.id, 50);
    const before = await live(50);
    const count = 600;
    await open(service.url, service.id, count);
    const perConnection = ((await live(50 + count)) - before) / count;
    console.log(`heap per idle subscription: ${Math.round(perConnection)} bytes`);
    expect(perConnection).toBeGreaterThan(0);
    expect(perConnection).toBeLessThan(bound);
  }, 120_000);
});
