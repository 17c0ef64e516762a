/**
 * The WebSocket heartbeat over real sockets: a peer that stops answering pings is terminated, one
 * that answers is kept, and the pings of one interval are spread over it, a slice of the sockets
 * per tick, instead of leaving in one turn.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { startWsHeartbeat, type WsHeartbeat } from '../../../../src/graphql/ws/ws-heartbeat.js';
import { eventually } from '../../../support/graphql.js';

const opened: Array<{ close(): void }> = [];
afterEach(() => {
  for (const it of opened.splice(0)) it.close();
});

async function serve(intervalMs: number, slices: number): Promise<{ server: WebSocketServer; heartbeat: WsHeartbeat; url: string }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const heartbeat = startWsHeartbeat({ clients: server.clients, intervalMs, slices });
  server.on('connection', (socket) => heartbeat.add(socket));
  opened.push({ close: () => (heartbeat.stop(), server.close()) });
  return { server, heartbeat, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function connect(url: string, options: { autoPong?: boolean } = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, options);
  opened.push({ close: () => socket.terminate() });
  await once(socket, 'open');
  return socket;
}

describe('the WebSocket heartbeat', () => {
  it('terminates a peer that stops answering pings and keeps one that answers', async () => {
    const { server, url } = await serve(300, 3);
    const answering = await connect(url);
    const silent = await connect(url, { autoPong: false });
    let silentPings = 0;
    silent.on('ping', () => (silentPings += 1));
    const closed = once(silent, 'close');
    await closed;
    // Pinged once, found silent at its next turn, terminated (no close frame: 1006).
    expect(silentPings).toBeGreaterThanOrEqual(1);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    let answeringPings = 0;
    answering.on('ping', () => (answeringPings += 1));
    await eventually(() => answeringPings >= 3, 5000, 'three more rounds of pings');
    expect(answering.readyState).toBe(WebSocket.OPEN);
    expect(server.clients.size).toBe(1);
  });

  it('spreads one interval’s pings over its ticks, each socket pinged once per interval', async () => {
    const intervalMs = 1000;
    const { url } = await serve(intervalMs, 10);
    const sockets = await Promise.all(Array.from({ length: 100 }, () => connect(url)));
    const pings: number[][] = sockets.map(() => []);
    sockets.forEach((socket, i) => socket.on('ping', () => pings[i]?.push(performance.now())));
    await eventually(() => pings.every((times) => times.length >= 2), 10_000, 'two pings on every socket');
    // Within one round, the first ping of every socket: spread over the interval, not one burst.
    const firsts = pings.map((times) => times[0] as number).sort((a, b) => a - b);
    const spread = (firsts.at(-1) as number) - (firsts[0] as number);
    expect(spread).toBeGreaterThan(intervalMs / 2);
    // Most in their own tick (100 ms apart): at least five distinct ticks of 100 ms.
    expect(new Set(firsts.map((t) => Math.floor((t - (firsts[0] as number)) / 100))).size).toBeGreaterThanOrEqual(5);
    // One interval, give or take a tick, between a socket's two pings.
    for (const times of pings) expect((times[1] as number) - (times[0] as number)).toBeGreaterThan(intervalMs * 0.7);
  });
});
