/**
 * The plumbing under the Redis test topologies: free ports, one-shot commands to a node, polling
 * with a deadline, and keeping track of every redis-server started so none outlives the process
 * that started it (an exit hook for a normal exit, a watchdog for a killed one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

const WATCHDOG = fileURLToPath(new URL('./watchdog.sh', import.meta.url));

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { freePort } from '../free-port.js';

/**
 * Polls `probe` until it returns a value other than `undefined` or `false`; a probe that throws
 * counts as "not yet" (a node still starting refuses connections). Fails after `timeoutMs` with
 * the last error, if any.
 */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs / 1000} s${last === undefined ? '' : ` (last error: ${(last as Error).message})`}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Sends one command on a connection of its own and closes it. Bounded in time: a paused
 * (SIGSTOPped) node accepts the connection but never answers, and a poll must not hang on it.
 */
export async function command(port: number, password: string | undefined, args: readonly string[], timeoutMs = 1500): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    ...(password === undefined ? {} : { password }),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined); // a refused connection rejects connect() below as well
  try {
    await client.connect();
    return await client.call(args[0] as string, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/** `field:value` lines of an INFO or CLUSTER INFO answer. */
export function infoFields(text: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of String(text).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** The last lines of a node's log, for error messages. */
export async function logTail(file: string, lines = 20): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-lines).join('\n');
}

/** redis-server processes still running, killed if this process exits without stopping them. */
const running = new Set<ChildProcess>();
let exitHook = false;

/** Kills `child` (SIGKILL, which also ends a SIGSTOPped process) when this process exits, if it still runs then. */
export function track(child: ChildProcess): void {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  running.add(child);
  void once(child, 'exit').then(() => running.delete(child));
}

/**
 * Starts the watchdog for a topology's folder: an 'exit' hook does not run when this process is
 * killed with SIGKILL (a test runner timing out), so a detached shell polls for this process and,
 * once it is gone, kills every node whose pid file is under `root` and, with `remove`, deletes it.
 */
export function startWatchdog(root: string, remove: boolean): ChildProcess {
  const watchdog = spawn('bash', [WATCHDOG, String(process.pid), root, remove ? 'remove' : 'keep'], { stdio: 'ignore', detached: true });
  watchdog.unref();
  return watchdog;
}
