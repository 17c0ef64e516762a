/** A MONITOR connection to the machine's shared Redis, for tests that look at the commands a step sends. */
import { Redis } from 'ioredis';

/**
 * Opens a MONITOR connection (REDIS_URL, else 127.0.0.1:6379); the caller disconnects it. The
 * machine's Redis is shared, so other clients' lines arrive at any time:
 * - one in the same read as MONITOR's own reply comes before ioredis marks the connection as
 *   monitoring, and is reported as an error (`Redis#monitor()` rejects with it, so it is not used);
 * - lines still in flight when the monitor is closed reach a connection no longer monitoring.
 * They answer nothing of the test's and are ignored.
 */
export async function openMonitor(): Promise<Redis> {
  const monitor = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, monitor: true });
  monitor.on('error', () => undefined);
  // Not `events.once`: it rejects on the first `error`, which is such a line arriving first.
  const monitoring = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('MONITOR did not start within 10 s')), 10_000);
    monitor.once('monitoring', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  await monitor.connect();
  await monitoring;
  return monitor;
}

/** The commands (name lower-cased, then arguments) `monitor` sees that name something containing `mark`. */
export function commandsNaming(monitor: Redis, mark: string): string[][] {
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((arg) => arg.includes(mark))) seen.push([String(args[0]).toLowerCase(), ...args.slice(1)]);
  });
  return seen;
}
