/** A MONITOR connection to a Redis (the machine's shared one by default), for tests that look at the commands a step sends. */
import { Redis } from 'ioredis';

/**
 * Opens a MONITOR connection to `url` (by default REDIS_URL, else 127.0.0.1:6379); the caller
 * disconnects it. The machine's Redis is shared, so other clients' lines arrive at any time:
 * - one in the same read as MONITOR's own reply comes before ioredis marks the connection as
 *   monitoring, and is reported as an error (`Redis#monitor()` rejects with it, so it is not used);
 * - lines still in flight when the monitor is closed reach a connection no longer monitoring.
 * They answer nothing of the test's and are ignored.
 */
export async function openMonitor(url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<Redis> {
  const monitor = new Redis(url, { lazyConnect: true, monitor: true });
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

/**
 * What each given connection (by its `addr`, as `CLIENT LIST` shows it) sends, as `monitor` sees
 * it: per connection, `entry` for a ZADD naming `mark`, `script` for a script call naming it, `wait`
 * for a WAIT. Everything else is left out.
 */
export function writesOf(monitor: Redis, sources: ReadonlySet<string>, mark: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (!sources.has(source)) return;
    const name = String(args[0]).toLowerCase();
    const naming = args.some((arg) => arg.includes(mark));
    const kind = name === 'wait' ? 'wait' : name === 'zadd' && naming ? 'entry' : name.startsWith('eval') && naming ? 'script' : undefined;
    if (kind === undefined) return;
    const sent = seen.get(source);
    if (sent === undefined) seen.set(source, [kind]);
    else sent.push(kind);
  });
  return seen;
}
