/** Memory: heap per stored message, RSS and heap per idle subscribed WebSocket, RSS per idle followed test. */
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { runWorker } from './lib/worker.js';
import { benchFollowedTests, benchSockets } from './sockets.js';

/** Runs the memory benchmarks: heap per stored message, RSS per idle subscribed socket, RSS per idle followed test. */
export async function benchMemory(messages: number, sockets: number, followed: { tests: number; perSocket: number }, cluster: BenchBroker): Promise<Row[]> {
  const heap = await runWorker<{ perMessage: number; target: number; payloadBytes: number }>('memory', [String(messages)]);
  const socket = await benchSockets(cluster, sockets);
  const tests = await benchFollowedTests(cluster, followed.tests, followed.perSocket);
  return [
    {
      benchmark: 'memory',
      variant: `heap per stored message (${heap.payloadBytes}-byte payload)`,
      value: heap.perMessage,
      unit: 'bytes',
      target: `≤ ${heap.target}`,
      met: heap.perMessage <= heap.target,
    },
    {
      benchmark: 'memory',
      variant: `RSS per idle subscribed WebSocket (${sockets})`,
      value: socket.perSocket,
      unit: 'bytes',
      target: '≤ 51200',
      met: socket.perSocket <= 51_200,
    },
    {
      benchmark: 'memory',
      // No ceiling of its own: the part of the first socket row that is the service's own objects (RSS also
      // counts the heap's growth steps and the native side of each connection).
      variant: `heap per idle subscribed WebSocket, after full collections (${sockets})`,
      value: socket.heapPerSocket,
      unit: 'bytes',
    },
    {
      benchmark: 'memory',
      // Issue 47's target, for what one more idle subscribed socket costs (the first socket row also
      // carries what a service grows once under its first burst of handshakes: bench/sockets.ts).
      variant: `RSS per idle subscribed WebSocket, the slope from ${Math.floor(sockets / 2)} to ${sockets}`,
      value: socket.slopePerSocket,
      unit: 'bytes',
      target: '≤ 25600',
      met: socket.slopePerSocket <= 25_600,
    },
    {
      benchmark: 'memory',
      // No ceiling of its own: what one replica holds for each test a dashboard follows, met when the
      // service counted every one of them live while it was measured.
      variant: `RSS per idle followed test (${followed.tests} tests, ${followed.perSocket} subscriptions on each of ${tests.sockets} WebSockets; ${tests.held} live)`,
      value: tests.perTest,
      unit: 'bytes',
      target: `all ${followed.tests} held`,
      met: tests.held === followed.tests,
    },
  ];
}
