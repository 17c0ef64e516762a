/**
 * The ceiling for fan-out: a bare `ws` server speaking just enough of the graphql-ws protocol for
 * the benchmark's clients (connection_init → connection_ack, ping → pong, subscribe, complete), fed
 * the same record stream as the service through a bare kafkajs consumer (same topic, same fetch
 * wait). For each record it serializes the result once and writes the same `next` frame bytes the
 * service sends to every subscription of that test, and, as the service does, corks each socket for
 * the batch so the frames one socket gets from one batch leave in one write (without it, a batch of
 * many records, as a real broker's fetch returns, costs a system call per frame and the ceiling
 * reads several times the service's CPU per push). No auth, no GraphQL execution, no limits,
 * no store. `GET /metrics` reports its CPU time as the service's `/metrics` does, so the harness
 * reads both the same way; `GET /readyz` answers 200 once the consumer joined its group.
 * Prints `{ url, ids }` once listening, runs until SIGTERM.
 * It runs kafkajs's own request queue, which checks every connection every millisecond while idle
 * (the service does not: src/ingest/kafkajs-idle-queue.ts); BENCH_CEILING_IDLE_QUEUE=1 gives it the
 * service's queue, to read the ceiling without that cost beside the one a bare consumer pays.
 * Usage: bare-ws-fanout.ts <brokers> <topic> <fetchWaitMs> <tests>
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { Kafka, logLevel } from 'kafkajs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { nextFrame, testMessagesResult, type FanoutRecord } from '../lib/next-frame.js';
import { seedIds } from '../lib/seed.js';

// Before any connection: the method it replaces is looked up at each check, so loading it here is enough.
if (process.env.BENCH_CEILING_IDLE_QUEUE === '1') await import('../../src/ingest/kafkajs-idle-queue.js');

const [brokers = '', topic = '', fetchWaitArg = '500', testsArg = '1'] = process.argv.slice(2);
const ids = seedIds(Number(testsArg));
/** Subscriptions per test: the socket and the client's subscription id. */
const subscriptions = new Map<string, Map<WebSocket, Set<string>>>();
/** The TCP socket under each WebSocket, corked while a batch is written. */
const wires = new WeakMap<WebSocket, Socket>();
let joined = false;

const server = createServer((req, res) => {
  if (req.url === '/metrics') {
    const { user, system } = process.cpuUsage();
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`rcs_process_cpu_seconds_total ${(user + system) / 1e6}\nrcs_process_resident_memory_bytes ${process.memoryUsage().rss}\n`);
  } else if (req.url === '/readyz') res.writeHead(joined ? 200 : 503).end();
  else res.writeHead(404).end();
});
const wss = new WebSocketServer({ server, path: '/graphql', handleProtocols: () => 'graphql-transport-ws' });

interface Incoming {
  readonly type: string;
  readonly id?: string;
  readonly payload?: { readonly query?: string; readonly variables?: { readonly id?: string } };
}

wss.on('connection', (ws, request) => {
  wires.set(ws, request.socket);
  const mine = new Map<string, string>(); // subscription id → test
  // A client that breaks the protocol is dropped, not allowed to end the benchmark's server.
  ws.on('error', () => ws.terminate());
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as Incoming;
    if (message.type === 'connection_init') ws.send('{"type":"connection_ack"}');
    else if (message.type === 'ping') ws.send('{"type":"pong"}');
    else if (message.type === 'subscribe' && message.id !== undefined) {
      const test = message.payload?.variables?.id;
      if (message.payload?.query?.includes('testMessages') === true && test !== undefined) {
        mine.set(message.id, test);
        const sockets = subscriptions.get(test) ?? new Map<WebSocket, Set<string>>();
        subscriptions.set(test, sockets);
        sockets.set(ws, (sockets.get(ws) ?? new Set()).add(message.id));
      } else {
        // The clients' liveness query (`{ __typename }`): answered, then completed.
        ws.send(nextFrame(message.id, '{"data":{"__typename":"Query"}}'));
        ws.send(JSON.stringify({ id: message.id, type: 'complete' }));
      }
    } else if (message.type === 'complete' && message.id !== undefined) {
      const test = mine.get(message.id);
      mine.delete(message.id);
      if (test !== undefined) subscriptions.get(test)?.get(ws)?.delete(message.id);
    }
  });
  ws.on('close', () => {
    for (const test of new Set(mine.values())) subscriptions.get(test)?.delete(ws);
  });
});

const kafka = new Kafka({ clientId: 'bench-bare-ws', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: `bench-bare-ws-${process.pid}`, maxWaitTimeInMs: Number(fetchWaitArg) });
consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  eachBatch: async ({ batch }) => {
    const corked = new Set<Socket>();
    for (const m of batch.messages) {
      const record = JSON.parse(String(m.value)) as FanoutRecord;
      const sockets = subscriptions.get(record.correlationId);
      if (sockets === undefined) continue;
      const result = testMessagesResult(record);
      for (const [ws, subs] of sockets) {
        const wire = wires.get(ws);
        if (wire !== undefined && !corked.has(wire)) {
          wire.cork();
          corked.add(wire);
        }
        for (const id of subs) ws.send(nextFrame(id, result));
      }
    }
    for (const wire of corked) wire.uncork();
  },
});

process.once('SIGTERM', () => {
  for (const ws of wss.clients) ws.terminate();
  void consumer.disconnect().finally(() => server.close(() => process.exit(0)));
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ids })));
