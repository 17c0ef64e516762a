/** RSS per idle subscribed WebSocket: the service's RSS before and after N idle subscribers. */
import type { BenchBroker } from './lib/broker.js';
import { startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';

async function rss(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^rcs_process_resident_memory_bytes (\d+)/m.exec(text)?.[1]);
}

/** Opens `count` idle subscribed sockets and returns the service's RSS growth per socket. */
export async function benchSockets(cluster: BenchBroker, count: number): Promise<{ perSocket: number }> {
  const env = { ...BENCH_AUTH_ENV, KAFKA_BROKERS: cluster.bootstrapServers.join(','), KAFKA_GROUP_ID: `bench-s-${Date.now()}` };
  const service = startWorker('service', ['--tests', '1', '--messages', '0'], env);
  try {
    const { url, ids } = (await service.ready) as { url: string; ids: string[] };
    // A few warm-up connections first, so one-time costs are not charged to the sockets.
    const warm = startWorker('idle-sockets', [url, await benchToken(), '20', ids[0] as string]);
    await warm.ready;
    await warm.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await rss(url);
    const sockets = startWorker('idle-sockets', [url, await benchToken(), String(count), ids[0] as string]);
    await sockets.ready;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = await rss(url);
    await sockets.stop();
    return { perSocket: (after - before) / count };
  } finally {
    await service.stop();
  }
}
