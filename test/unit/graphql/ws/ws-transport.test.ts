/**
 * The graphql-ws binding writes its protocol frames through the process's write coalescer, the one
 * scheme of held writes a socket has (the hub's pushes use it too): over a real WebSocket, every
 * frame the transport sends is held by the coalescer on the socket ws writes to, and none is
 * corked by the transport itself.
 */
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { buildSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createSilentLogger } from '../../../../src/base/logger.js';
import { createWriteCoalescer, type WriteCoalescer } from '../../../../src/graphql/fanout/write-coalescer.js';
import { serveGraphQLOverWebSocket, type WebSocketTransport } from '../../../../src/graphql/ws/ws-transport.js';

const schema = buildSchema('type Query { hello: String }');
const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function serve(coalescer: Pick<WriteCoalescer, 'hold'>): Promise<{ url: string; wires: Set<Socket> }> {
  const wss = new WebSocketServer({ port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const wires = new Set<Socket>();
  wss.on('connection', (_socket, request) => wires.add(request.socket));
  const transport: WebSocketTransport = serveGraphQLOverWebSocket({ schema, roots: { query: { hello: () => 'world' } }, coalescer }, wss, createSilentLogger());
  stops.push(() => transport.dispose());
  return { url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, wires };
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
});
