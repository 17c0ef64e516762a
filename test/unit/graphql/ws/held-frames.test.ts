/**
 * The hub's frames to one WebSocket connection are held for the turn and leave as one buffer, on
 * real connections: one stream write a socket and turn whatever the number of frames, the frames
 * byte for byte what the client reads, in order, each length at the edges of its header's three
 * sizes; a close made through `closeSocket` lets the held frames leave before the close frame; a
 * socket closed by anyone else gets no data after its close frame; the sink counts held bytes
 * towards its mark, and hands them to the connection when it waits for it to drain.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { Socket } from 'node:net';
import { ServiceError } from '../../../../src/base/errors.js';
import { sharedResult } from '../../../../src/graphql/fanout/shared-results.js';
import { createWriteCoalescer, type WriteCoalescer } from '../../../../src/graphql/fanout/write-coalescer.js';
import { closeSocket } from '../../../../src/graphql/ws/close-socket.js';
import { createHeldFrames } from '../../../../src/graphql/ws/held-frames.js';
import { createWebSocketPushSink } from '../../../../src/graphql/ws/ws-push-sink.js';

let server: WebSocketServer | undefined;
let coalescer: WriteCoalescer | undefined;
afterEach(() => {
  coalescer?.dispose();
  server?.close();
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The server's side of a real connection, the stream writes made to its TCP connection, and what its client reads. */
async function pair() {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((resolve) => server!.once('listening', resolve));
  const accepted = new Promise<[WebSocket, Socket]>((resolve) => server!.once('connection', (socket, request) => resolve([socket, request.socket])));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  const messages: string[] = [];
  client.on('message', (data) => messages.push(String(data)));
  const closed = new Promise<{ code: number; messages: string[] }>((resolve) => client.once('close', (code) => resolve({ code, messages: [...messages] })));
  const [socket, wire] = await accepted;
  await new Promise((resolve) => client.once('open', resolve));
  // Every stream write made to the connection from here on, and its length.
  const writes: number[] = [];
  const write = wire.write.bind(wire) as (chunk: Buffer) => boolean;
  wire.write = ((chunk: Buffer, ...rest: unknown[]) => {
    writes.push(chunk.length);
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof wire.write;
  return { socket, wire, client, messages, closed, writes };
}

const prefix = (id: string) => Buffer.from(`{"id":"${id}","type":"next","payload":`);
const payload = (n: number) => Buffer.from(`{"data":{"n":${n}}}`);

describe('held frames', () => {
  it('write the frames one turn gives a socket in one stream write, each frame as the client reads it, in order', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, messages, writes } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    // One large enough for the 64-bit length.
    const big = Buffer.from(`{"data":{"text":"${'x'.repeat(70_000)}"}}`);
    for (let n = 0; n < 5; n++) frames.text(prefix(String(n)), payload(n));
    frames.text(prefix('big'), big);
    expect(writes).toEqual([]);
    expect(frames.bytes).toBeGreaterThan(70_000);
    await turn();
    expect(writes).toHaveLength(1);
    expect(frames.bytes).toBe(0);
    await expect.poll(() => messages.length).toBe(6);
    expect(messages.slice(0, 5)).toEqual([0, 1, 2, 3, 4].map((n) => `{"id":"${n}","type":"next","payload":{"data":{"n":${n}}}}`));
    expect(messages[5]).toBe(`{"id":"big","type":"next","payload":${big.toString()}}`);
    frames.text(prefix('7'), payload(7));
    await turn();
    expect(writes).toHaveLength(2);
  });

  it('frame each payload length with the header RFC 6455 gives it, at the edges of the 7-bit, 16-bit and 64-bit lengths', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, messages, writes } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    // A frame's payload is the prefix, the payload and a closing brace: a JSON string of the length that makes it `size`.
    const sizes = [125, 126, 65_535, 65_536];
    const sent = sizes.map((size, n) => {
      const head = prefix(String(n));
      const body = Buffer.from(`"${'y'.repeat(size - head.length - 3)}"`);
      frames.text(head, body);
      return `${head.toString()}${body.toString()}}`;
    });
    expect(sent.map((text) => Buffer.byteLength(text))).toEqual(sizes);
    // Headers of 2, 4, 4 and 10 bytes.
    expect(frames.bytes).toBe(125 + 2 + 126 + 4 + 65_535 + 4 + 65_536 + 10);
    await turn();
    expect(writes).toEqual([125 + 2 + 126 + 4 + 65_535 + 4 + 65_536 + 10]);
    await expect.poll(() => messages.length).toBe(4);
    expect(messages).toEqual(sent);
  });

  it('leave before the close frame of a socket closed through closeSocket in the same turn', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, closed } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    frames.text(prefix('1'), payload(1));
    frames.text(prefix('2'), payload(2));
    closeSocket(socket, new ServiceError('SHUTTING_DOWN', 'Going away'));
    const { code, messages } = await closed;
    expect(code).toBe(1001);
    expect(messages).toEqual([1, 2].map((n) => `{"id":"${n}","type":"next","payload":{"data":{"n":${n}}}}`));
  });

  it('write nothing after a close frame written by anyone else', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, closed, writes } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    frames.text(prefix('1'), payload(1));
    socket.close(1000, 'done');
    const written = writes.length;
    await turn();
    expect(writes).toHaveLength(written);
    const { code, messages } = await closed;
    expect(code).toBe(1000);
    expect(messages).toEqual([]);
  });

  it('count towards the sink’s mark before they reach the connection', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, messages } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    let over = 0;
    const sink = createWebSocketPushSink({
      socket,
      frames,
      id: '1',
      highWaterMark: 100,
      overMark: () => (over += 1),
      withClientErrors: (result) => result,
    });
    const shared = sharedResult({ n: 1 }, { data: { testMessages: { sequence: 1, payload: 'y'.repeat(40) } } });
    // One frame (about 110 bytes) passes the 100-byte mark while nothing has reached the connection.
    expect(sink.write(shared)).toBe(false);
    expect(socket.bufferedAmount).toBe(0);
    expect(over).toBe(1);
    let resumed = false;
    sink.whenWritable(() => (resumed = true));
    expect(resumed).toBe(false);
    await expect.poll(() => messages.length).toBe(1);
    await expect.poll(() => resumed).toBe(true);
  });

  it('go to the corked connection when the sink waits to be writable, so that its buffer and its drain count them', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 0 });
    const { socket, wire, messages, writes } = await pair();
    const frames = createHeldFrames(socket, wire, coalescer);
    const sink = createWebSocketPushSink({ socket, frames, id: '1', highWaterMark: 100, overMark: () => {}, withClientErrors: (result) => result });
    const shared = sharedResult({ n: 1 }, { data: { testMessages: { sequence: 1, payload: 'y'.repeat(40) } } });
    expect(sink.write(shared)).toBe(false);
    const held = frames.bytes;
    let resumed = false;
    sink.whenWritable(() => (resumed = true));
    // Handed to the connection at once, held there until the turn's write: a subscriber that waited
    // on frames the connection had not seen would resume as soon as the kernel took them, ahead of
    // the drain the connection reports for them (the subscriber caught up while still behind).
    expect(frames.bytes).toBe(0);
    expect(writes).toEqual([held]);
    expect(wire.writableCorked).toBeGreaterThan(0);
    expect(socket.bufferedAmount).toBe(held);
    expect(resumed).toBe(false);
    await expect.poll(() => messages.length).toBe(1);
    await expect.poll(() => resumed).toBe(true);
  });
});
