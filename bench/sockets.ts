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

/** What the sockets of {@link benchSockets} cost the service, per socket, in bytes. */
export interface SocketCost {
  /** RSS growth per socket, `count` sockets against the service before them (as measured until 2026-11-29). */
  readonly perSocket: number;
  /** Heap in use after full collections, per socket, over the same `count`. */
  readonly heapPerSocket: number;
  /**
   * RSS growth per socket between a service holding `count / 2` and one holding `count` (each fresh):
   * what one more socket costs, without the growth every service pays once under its first burst
   * of handshakes, which the row above charges to its sockets.
   */
  readonly slopePerSocket: number;
}

/**
 * Opens `count` idle subscribed sockets on a fresh service and returns its growth per socket: RSS,
 * and the heap in use after full collections (the service worker collects on SIGUSR2), which counts
 * what the sockets hold without the garbage of their handshakes or the heap's growth steps; then the
 * same with half as many on another fresh service, for the slope between the two.
 *
 * The slope leaves out what a service grows once under a burst, whatever its size: V8's young
 * generation grows to its full size (about 35 MB on Node 26), which read as 7 KB of RSS per socket
 * over 5,000 sockets. Two fresh services of the same making pay it alike, so it cancels.
 */
export async function benchSockets(cluster: BenchBroker, count: number): Promise<SocketCost> {
  const full = await socketGrowth(cluster, count);
  const half = Math.floor(count / 2);
  const halved = await socketGrowth(cluster, half);
  return { perSocket: full.rss / count, heapPerSocket: full.heap / count, slopePerSocket: (full.rss - halved.rss) / (count - half) };
}

/** A fresh service's growth, RSS and heap after full collections, in bytes, under `count` idle subscribed sockets. */
async function socketGrowth(cluster: BenchBroker, count: number): Promise<{ rss: number; heap: number }> {
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
    return { rss: after - before, heap: heapAfter - heapBefore };
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
