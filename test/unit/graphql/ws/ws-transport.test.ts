/**
 * The graphql-ws binding writes its protocol frames through the process's write coalescer, the one
 * scheme of held writes a socket has (the hub's pushes use it too): over a real WebSocket, every
 * frame the transport sends is held by the coalescer on the socket ws writes to, and none is
 * corked by the transport itself; the frames of the hub's held for the socket leave before the
 * transport's own frames and its close; and an open socket keeps nothing of the request that opened it,
 * nor a running operation the message that started it.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createSilentLogger } from '../../../../src/base/logger.js';
import { createWriteCoalescer, type WriteCoalescer } from '../../../../src/graphql/fanout/write-coalescer.js';
import { serveGraphQLOverWebSocket, type WebSocketExtra, type WebSocketTransport } from '../../../../src/graphql/ws/ws-transport.js';

const schema = buildSchema('type Query { hello: String } type Subscription { forever: String }');
const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A subscription that yields nothing until it is returned; `started` is called as it opens. */
function forever(started: () => void): AsyncIterableIterator<never> {
  let stop: (() => void) | undefined;
  const stream: AsyncIterableIterator<never> = {
    next: () => {
      started();
      return new Promise((resolve) => (stop = () => resolve({ value: undefined as never, done: true })));
    },
    return: () => {
      stop?.();
      return Promise.resolve({ value: undefined as never, done: true });
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

async function serve(
  coalescer: Pick<WriteCoalescer, 'hold' | 'gather'>,
  started: () => void = () => undefined,
): Promise<{ url: string; wires: Set<Socket>; requests: Array<WeakRef<IncomingMessage>>; messages: Array<WeakRef<object>> }> {
  const wss = new WebSocketServer({ port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const wires = new Set<Socket>();
  const requests: Array<WeakRef<IncomingMessage>> = [];
  // Every message the server's sockets receive, as ws hands it to each of their listeners.
  const messages: Array<WeakRef<object>> = [];
  wss.on('connection', (socket, request) => {
    wires.add(request.socket);
    requests.push(new WeakRef(request));
    socket.on('message', (data) => messages.push(new WeakRef(data as object)));
  });
  const roots = { query: { hello: () => 'world' }, subscription: { forever: () => forever(started) } };
  const transport: WebSocketTransport = serveGraphQLOverWebSocket({ schema, roots, coalescer }, wss, createSilentLogger());
  stops.push(() => transport.dispose());
  return { url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, wires, requests, messages };
}

/** The engine's collector, which the test process may call once the flag is set. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Collects until every one of `refs` is gone, or a few times over: what survives is held. */
async function collectAll(refs: ReadonlyArray<WeakRef<object>>): Promise<void> {
  const gc = collector();
  for (let i = 0; i < 5 && refs.some((ref) => ref.deref() !== undefined); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
}

describe('the WebSocket transport', () => {
  it('holds every frame it sends through the coalescer, on the socket ws writes to, and corks nothing of its own', async () => {
    const coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    stops.push(() => coalescer.dispose());
    const held: Writable[] = [];
    const corkedAtHold: number[] = [];
    const { url, wires } = await serve({
      hold: (connection) => {
        held.push(connection);
        corkedAtHold.push(connection.writableCorked);
        coalescer.hold(connection);
      },
      gather: (writes) => coalescer.gather(writes),
    });
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    stops.push(() => client.dispose());
    const result = await new Promise((resolve, reject) => {
      let value: unknown;
      client.subscribe({ query: '{ hello }' }, { next: (v) => (value = v), error: reject, complete: () => resolve(value) });
    });
    expect(result).toEqual({ data: { hello: 'world' } });
    // connection_ack, next, complete: each held, on the one wire.
    expect(held.length).toBeGreaterThanOrEqual(3);
    expect(new Set(held)).toEqual(wires);
    // Nothing corked the socket before the coalescer did: no second scheme of held writes.
    expect(corkedAtHold.every((corked) => corked <= 1)).toBe(true);
    expect(corkedAtHold[0]).toBe(0);
    expect([...wires][0]?.writableCorked).toBe(0);
  });

  it('sends its protocol frames after the hub’s frames held before them, and closes after them', async () => {
    const coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    stops.push(() => coalescer.dispose());
    const wss = new WebSocketServer({ port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const hold = (extra: WebSocketExtra, name: string) => extra.frames.text(Buffer.from(`{"id":"${name}","type":"next","payload":`), Buffer.from('{}'));
    let extra: WebSocketExtra | undefined;
    // Before the transport's listeners: a frame of the hub's held in the turn graphql-ws reads the
    // second connection_init in, and closes the socket for it (4429, out of turn).
    wss.on('connection', (socket) => socket.on('message', () => extra !== undefined && hold(extra, 'before-close')));
    const transport = serveGraphQLOverWebSocket(
      {
        schema,
        coalescer,
        // A frame of the hub's held in the turn the acknowledgement is sent in.
        onConnect: (ctx) => {
          hold(ctx.extra, 'before-ack');
          extra = ctx.extra;
          return true;
        },
      },
      wss,
      createSilentLogger(),
    );
    stops.push(() => transport.dispose());
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`, 'graphql-transport-ws');
    stops.push(() => client.terminate());
    const messages: string[] = [];
    client.on('message', (data) => messages.push(String(data)));
    const closed = new Promise<number>((resolve) => client.once('close', resolve));
    await new Promise((resolve) => client.once('open', resolve));
    client.send('{"type":"connection_init"}');
    await expect.poll(() => messages.length).toBe(2);
    client.send('{"type":"connection_init"}');
    expect(await closed).toBe(4429);
    expect(messages).toEqual([
      '{"id":"before-ack","type":"next","payload":{}}',
      '{"type":"connection_ack"}',
      '{"id":"before-close","type":"next","payload":{}}',
    ]);
  });

  it('keeps no upgrade request for the life of a socket: an open socket holds its connection, not the request that opened it', async () => {
    const coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    stops.push(() => coalescer.dispose());
    const { url, requests } = await serve(coalescer);
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    stops.push(() => client.dispose());
    await new Promise((resolve, reject) =>
      client.subscribe({ query: '{ hello }' }, { next: () => undefined, error: reject, complete: () => resolve(undefined) }),
    );
    expect(requests).toHaveLength(1);
    // The socket is still open (the client is not lazy and has not been disposed); a request held
    // by the transport survives any number of collections.
    await collectAll(requests);
    expect(requests[0]?.deref()).toBeUndefined();
  });

  it('keeps no message of a running operation: a subscription that lasts holds neither the message that started it nor the buffer it came in', async () => {
    const coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    stops.push(() => coalescer.dispose());
    let opened!: () => void;
    const running = new Promise<void>((resolve) => (opened = resolve));
    const { url, messages } = await serve(coalescer, () => opened());
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    stops.push(() => client.dispose());
    const unsubscribe = client.subscribe({ query: 'subscription { forever }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    stops.push(unsubscribe);
    await running;
    // connection_init and subscribe, while the subscription still runs.
    expect(messages).toHaveLength(2);
    await collectAll(messages);
    expect(messages.map((message) => message.deref())).toEqual([undefined, undefined]);
  });
});
