/**
 * The live push path in process, with no socket under it: a memory log whose tests are each
 * followed by `perTest` `testMessages { sequence payload }` subscriptions through the fan-out hub,
 * every subscription's frames written by the service's own WebSocket sink through the write
 * coalescer to a wire that takes everything (five subscriptions a wire at 10,000, as the fan-out
 * benchmark's clients share sockets), and the benchmark's records appended in chunks as the
 * consumer hands them over. What it measures is the service's code from the store to the wire's
 * `write`: the system calls, the kernel and the clients are not in it, and are the same for every build.
 *
 * Prints `{ pushes, nsPerPush, bytes }` (the median of its rounds' nanoseconds a push). One run's
 * figure moves by 10–20 % on this machine: compare builds by runs alternating between two
 * checkouts (bench/README.md, "The push path measured in process").
 *
 * Usage: npx tsx bench/push-path.ts [tests, 1000] [perTest, 10] [records a round, 20000] [rounds, 5]
 */
import { Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Socket } from 'node:net';
import { decodeResultMessage } from '../src/ingest/decode-result.js';
import { createWriteCoalescer } from '../src/graphql/fanout/write-coalescer.js';
import { createHeldFrames } from '../src/graphql/ws/held-frames.js';
import { createWebSocketPushSink } from '../src/graphql/ws/ws-push-sink.js';
import { createTestPipeline } from '../test/support/pipeline.js';
import { testPrincipal } from '../test/support/principal.js';
import { median } from './lib/median.js';

const [tests = 1000, perTest = 10, records = 20_000, rounds = 5] = process.argv.slice(2).map(Number);
const CHUNK = 2000;
const QUERY = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload } }';

// The pipeline as the service composes it, over a memory log (the one the unit tests drive).
const { pipeline, log } = createTestPipeline();
const principal = testPrincipal();
const coalescer = createWriteCoalescer({ maxDelayMs: 0 });

/** A wire that takes every write at once, counting its bytes. */
let written = 0;
function wire(): Socket {
  return new Writable({
    writev(chunks, done) {
      for (const { chunk } of chunks) written += (chunk as Buffer).length;
      done();
    },
    write(chunk: Buffer, _encoding, done) {
      written += chunk.length;
      done();
    },
  }) as unknown as Socket;
}
/** What the sink reads of a `ws` socket: open, nothing buffered. */
const socket = { readyState: 1, OPEN: 1, bufferedAmount: 0 } as unknown as WebSocket;

const ids = Array.from({ length: tests }, (_, i) => `bench-${String(i).padStart(4, '0')}-0000-0000-000000000000`);
const perWire = Math.max(1, Math.ceil((tests * perTest) / 2000));
let current = wire();
let frames = createHeldFrames(socket, current, coalescer);
let opened = 0;
for (const id of ids) {
  await log.create({ correlationId: id, owner: principal.subject, input: null });
  for (let i = 0; i < perTest; i++) {
    if (opened > 0 && opened % perWire === 0) {
      current = wire();
      frames = createHeldFrames(socket, current, coalescer);
    }
    const args = await pipeline.lifecycle.prepare({ principal, transport: 'websocket', params: { query: QUERY, variables: { id } } });
    if (Array.isArray(args)) throw args[0];
    const sink = createWebSocketPushSink({
      socket,
      frames,
      id: String(opened),
      highWaterMark: 1 << 30,
      overMark: () => undefined,
      withClientErrors: (result) => result,
    });
    const subscription = await pipeline.hub.subscribe(args, sink);
    if (!('ended' in subscription)) throw new Error(JSON.stringify(subscription.errors));
    subscription.start();
    opened += 1;
  }
}
await new Promise((resolve) => setImmediate(resolve));

let sequence = 0;
/** One chunk of records, spread over the tests in turn, as the producer writes them. */
function chunk(size: number) {
  return Array.from({ length: size }, () => {
    sequence += 1;
    const id = ids[sequence % tests] as string;
    // The producer's record, decoded as the consumer decodes it (its payload keeps its text).
    const value = Buffer.from(
      JSON.stringify({ correlationId: id, sequence, status: 'running', payload: { sentAt: 1_764_000_000_000 + sequence, note: 'x'.repeat(60) } }),
    );
    const decoded = decodeResultMessage({
      topic: 'results',
      partition: 0,
      offset: String(sequence),
      key: Buffer.from(id),
      value,
      headers: Object.create(null) as Record<string, string>,
    });
    if ('ok' in decoded) throw new Error(decoded.reason);
    return decoded;
  });
}

// Every round's records made first: the rounds time the store and the pushes alone.
const chunks = Array.from({ length: rounds }, () => Array.from({ length: Math.ceil(records / CHUNK) }, (_, i) => chunk(Math.min(CHUNK, records - i * CHUNK))));
const timings: number[] = [];
for (const round of chunks) {
  const started = process.hrtime.bigint();
  for (const messages of round) {
    await log.append(messages);
    await new Promise((resolve) => setImmediate(resolve));
  }
  timings.push(Number(process.hrtime.bigint() - started) / (records * perTest));
}
console.log(JSON.stringify({ pushes: records * perTest * rounds, nsPerPush: Math.round(median(timings)), bytes: written }));
coalescer.dispose();
await log.dispose();
process.exit(0);
