/**
 * What the WebSocket sink's hand-built frames are worth: `npx tsx bench/frame-writers.ts [sockets]
 * [rounds] [frames per socket per turn]`. The service writes each subscriber's `next` frame itself
 * (src/graphql/ws/ws-push-sink.ts: the frame's prefix and payload held with the socket's other
 * frames of the turn, src/graphql/ws/held-frames.ts, and framed into one buffer at the write
 * coalescer's write) instead of through `ws`'s `send`. This measures three writers side by side in
 * one process, on real WebSockets whose clients read in a child process:
 *
 * - **held**: the service's own sink (`createWebSocketPushSink`), the socket's frames of the turn
 *   written as one buffer;
 * - **per frame**: each frame built in a buffer of its own (`writeTextFrame`) and written to the
 *   corked connection through the coalescer, one stream write a frame, with the sink's checks (the
 *   sink before the frames were held);
 * - **ws.send**: the same message made whole (`Buffer.concat` of prefix, bytes and brace: `send`
 *   takes one message) and sent with `ws`'s own writer, the connection held by the same coalescer
 *   (`hold`), as graphql-ws's own frames are.
 *
 * Each round writes `perTurn` frames to every socket in one turn and waits for the turn's write; rounds
 * of the writers take each order in turn, and the CPU time of this process (the writer and the kernel's send)
 * is divided by the frames written. The clients check every frame's length and count them.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import type { PushSink } from '../src/graphql/fanout/push-sink.js';
import { sharedResult } from '../src/graphql/fanout/shared-results.js';
import { createWriteCoalescer } from '../src/graphql/fanout/write-coalescer.js';
import { createHeldFrames, headerLength, writeTextFrame } from '../src/graphql/ws/held-frames.js';
import { createWebSocketPushSink } from '../src/graphql/ws/ws-push-sink.js';
import { roundOrder } from './lib/round-order.js';

const sockets = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 400);
// Frames per socket in one turn: 1 when records come one at a time, more for a broker batch of one test's records.
const perTurn = Number(process.argv[4] ?? 1);
// A result as the benchmarks' subscribers get it: a `testMessages` payload of about 200 bytes.
const message = { sequence: 1, status: 'RUNNING', payload: { step: 'compile', ok: true, ms: 1234, note: 'x'.repeat(120) } };
const shared = sharedResult(message, { data: { testMessages: message } });
const bytes = shared.bytes();
const SUFFIX = Buffer.from('}');

const CLIENT = `
import WebSocket from 'ws';
const [url, count, expected] = process.argv.slice(1);
let frames = 0, bad = 0;
const all = [];
for (let i = 0; i < Number(count); i++) {
  const ws = new WebSocket(url);
  ws.on('message', (data) => { frames++; if (data.length !== Number(expected)) bad++; });
  all.push(new Promise((resolve) => ws.once('open', resolve)));
}
await Promise.all(all);
process.send({ open: true });
process.on('message', () => process.send({ frames, bad }));
`;

/** One client's connection: its socket, the TCP connection under it, and the service's sink of its subscription. */
interface Connection {
  readonly socket: WebSocket;
  readonly wire: Socket;
  readonly id: string;
  /** The subscription's prefix, as the sink splices it in. */
  readonly prefix: Buffer;
  readonly sink: PushSink;
}

interface Writer {
  readonly name: string;
  write(connection: Connection): void;
}

const coalescer = createWriteCoalescer({ maxDelayMs: 0 });
const writers: Writer[] = [
  { name: 'held', write: (c) => c.sink.write(shared) },
  {
    name: 'per frame',
    write: (c) => {
      // The sink's checks, as it made them: the socket open, its buffer under the mark.
      if (c.socket.readyState !== c.socket.OPEN) return;
      const length = c.prefix.length + bytes.length + 1;
      const frame = Buffer.allocUnsafe(length + headerLength(length));
      writeTextFrame(frame, 0, c.prefix, bytes);
      coalescer.write(c.wire, frame);
      if (c.socket.bufferedAmount >= Infinity) throw new Error('over the mark');
    },
  },
  {
    name: 'ws.send',
    write: (c) => {
      coalescer.hold(c.wire);
      // The message the sink's frame holds, made whole for `send`.
      c.socket.send(Buffer.concat([c.prefix, bytes, SUFFIX]), { binary: false });
    },
  },
];

const server = new WebSocketServer({ port: 0, perMessageDeflate: false });
await once(server, 'listening');
const connected: Connection[] = [];
const { port } = server.address() as { port: number };
// Every frame of the run is as long as the longest id's (ids of equal length: zero-padded to one width).
const width = String(sockets - 1).length;
server.on('connection', (socket, request) => {
  const id = String(connected.length).padStart(width, '0');
  const wire = request.socket;
  // No mark is reached: each round waits for the clients to read what it wrote.
  const sink = createWebSocketPushSink({
    socket,
    frames: createHeldFrames(socket, wire, coalescer),
    id,
    highWaterMark: Infinity,
    overMark: () => undefined,
    withClientErrors: (result) => result,
  });
  connected.push({ socket, wire, id, prefix: Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`), sink });
});
const expected = Buffer.from(`{"id":"${'0'.repeat(width)}","type":"next","payload":`).length + bytes.length + 1;
const client = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, `ws://127.0.0.1:${port}`, String(sockets), String(expected)], {
  cwd: fileURLToPath(new URL('../', import.meta.url)),
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
await once(client, 'message');

const turn = () => new Promise((resolve) => setImmediate(resolve));
const cpu = new Map<string, number>(writers.map((w) => [w.name, 0]));
// Warm every writer up before measuring.
for (let r = 0; r < 50; r++)
  for (const writer of writers) {
    for (const c of connected) writer.write(c);
    await turn();
  }
for (let r = 0; r < rounds; r++) {
  // Every order of the writers in turn (lib/round-order.ts), so that none always follows the same one.
  for (const writer of roundOrder(writers, r)) {
    const before = process.cpuUsage();
    for (let k = 0; k < perTurn; k++) for (const c of connected) writer.write(c);
    await turn();
    const used = process.cpuUsage(before);
    cpu.set(writer.name, (cpu.get(writer.name) ?? 0) + used.user + used.system);
    // Let the clients read before the next round, so that no round pays for another's backlog.
    while (connected.some((c) => c.wire.writableLength > 0)) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
const frames = sockets * rounds * perTurn;
const total = (rounds * perTurn + 50) * sockets * writers.length;
// The clients may still be reading the last frames: ask until they have them all, for up to 10 s.
let counted = { frames: 0, bad: 0 };
for (const deadline = Date.now() + 10_000; counted.frames < total && Date.now() < deadline;) {
  client.send('count');
  [counted] = (await once(client, 'message')) as [{ frames: number; bad: number }];
  if (counted.frames < total) await new Promise((resolve) => setTimeout(resolve, 100));
}
const perPush = (name: string) => (cpu.get(name) ?? 0) / frames;
console.log(
  `${sockets} sockets, ${rounds} rounds per writer of ${perTurn} frame(s) per socket, ${expected}-byte frames; the clients read ${counted.frames}/${total} frames, ${counted.bad} of a wrong length`,
);
for (const writer of writers) console.log(`${writer.name.padEnd(10)} ${perPush(writer.name).toFixed(2)} µs CPU per frame`);
console.log(`held / per frame: ${(perPush('held') / perPush('per frame')).toFixed(2)}×; held / ws.send: ${(perPush('held') / perPush('ws.send')).toFixed(2)}×`);
client.kill();
coalescer.dispose();
server.close();
for (const c of connected) c.socket.terminate();
process.exitCode = counted.frames === total && counted.bad === 0 ? 0 : 1;
