/** Memory: heap per stored message, and RSS per idle subscribed WebSocket. */
import type { BenchBroker } from './lib/broker.js';
import type { Row } from './ingest.js';
import { runWorker } from './lib/worker.js';
import { benchSockets } from './sockets.js';

/** Runs both memory benchmarks. */
export async function benchMemory(messages: number, sockets: number, cluster: BenchBroker): Promise<Row[]> {
  const heap = await runWorker<{ perMessage: number; target: number; payloadBytes: number }>('memory', [String(messages)]);
  const socket = await benchSockets(cluster, sockets);
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
  ];
}
