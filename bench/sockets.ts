/** RSS per idle subscribed WebSocket: the service's RSS before and after N idle subscribers. */
import type { BenchBroker } from './lib/broker.js';
import { startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';

async function rss(url: string): Promise<number> {
  return metric(url, 'rcs_process_resident_memory_bytes');
}

/** One unlabelled gauge of the service's `/metrics`. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1]);
}

/**
 * Opens `count` idle subscribed sockets and returns the service's growth per socket: RSS, and the
 * heap in use after full collections (the service worker collects on SIGUSR2), which counts what
 * the sockets hold without the garbage of their handshakes or the heap's growth steps.
 */
export async function benchSockets(cluster: BenchBroker, count: number): Promise<{ perSocket: number; heapPerSocket: number }> {
  const env = { ...BENCH_AUTH_ENV, KAFKA_BROKERS: cluster.bootstrapServers.join(','), KAFKA_GROUP_ID: `bench-s-${Date.now()}` };
  const service = startWorker('service', ['--tests', '1', '--messages', '0'], env);
  const collected = async (url: string) => {
    service.child.kill('SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return metric(url, 'rcs_nodejs_heap_size_used_bytes');
  };
  try {
    const { url, ids } = (await service.ready) as { url: string; ids: string[] };
    // A few warm-up connections first, so one-time costs are not charged to the sockets.
    const warm = startWorker('idle-sockets', [url, await benchToken(), '20', ids[0] as string]);
    await warm.ready;
    await warm.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await rss(url);
    const heapBefore = await collected(url);
    const sockets = startWorker('idle-sockets', [url, await benchToken(), String(count), ids[0] as string]);
    await sockets.ready;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = await rss(url);
    const heapAfter = await collected(url);
    await sockets.stop();
    return { perSocket: (after - before) / count, heapPerSocket: (heapAfter - heapBefore) / count };
  } finally {
    await service.stop();
  }
}

/**
 * Follows `tests` idle tests, `perSocket` subscriptions on each WebSocket, and returns the
 * service's RSS growth per followed test (the sockets' own share included: `tests / perSocket`
 * sockets) and the live subscriptions the service counts while they are held.
 */
export async function benchFollowedTests(cluster: BenchBroker, tests: number, perSocket: number): Promise<{ perTest: number; sockets: number; held: number }> {
  const warmup = Math.min(perSocket * 4, 1000);
  const env = {
    ...BENCH_AUTH_ENV,
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_GROUP_ID: `bench-f-${Date.now()}`,
    // Every seeded test stays: the store's bound on tests is not what is measured.
    STORE_MAX_TESTS: String(tests + warmup),
  };
  const service = startWorker('service', ['--tests', String(tests + warmup), '--messages', '0'], env);
  try {
    const { url } = (await service.ready) as { url: string };
    const token = await benchToken();
    // Warm-up subscriptions to other tests first, so one-time costs are not charged to the measured ones.
    const warm = startWorker('followed-tests', [url, token, String(warmup), String(perSocket), String(tests)]);
    await warm.ready;
    await warm.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await rss(url);
    const followers = startWorker('followed-tests', [url, token, String(tests), String(perSocket)]);
    const { sockets } = (await followers.ready) as { sockets: number };
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = await rss(url);
    // What the service itself counts as live subscriptions: every followed test, or the row fails.
    const held = await metric(url, 'rcs_subscriptions');
    await followers.stop();
    return { perTest: (after - before) / tests, sockets, held };
  } finally {
    await service.stop();
  }
}
