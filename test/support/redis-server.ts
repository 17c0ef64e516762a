/**
 * A private Redis server on a free port, for tests that take Redis away and bring it back without
 * disturbing the machine's shared Redis. It persists every write (AOF, fsync always), so data
 * survives a kill and restart as it would on a real outage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './graphql.js';
import { freePort } from './service.js';

/** A private Redis server. */
export interface PrivateRedis {
  readonly url: string;
  /** Kills the server (SIGKILL): connections drop at once. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a private Redis server. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rcs-redis-'));
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;

  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir], { stdio: 'ignore' });
    await eventually(async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined); // refused while the server starts; the poll retries
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    }, 10_000, 'the private redis');
  };
  const kill = async () => {
    if (child === undefined || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url, kill, restart: start, stop: kill };
}
