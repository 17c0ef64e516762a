/**
 * A private Redis server on a free port, for tests that take Redis away and bring it back without
 * disturbing the machine's shared Redis. It persists every write (AOF, fsync always), so data
 * survives a kill and restart as it would on a real outage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
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

/** How a private Redis is protected, as managed Redis services are. */
export interface PrivateRedisOptions {
  /** `requirepass`: clients must authenticate with it. */
  readonly password?: string;
  /** Serve TLS only (no plain port), with this certificate and key, clients not authenticated by certificate. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
}

/** Starts a private Redis server. */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rcs-redis-'));
  let child: ChildProcess | undefined;
  const { password, tls } = options;
  const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  const url = `${tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`;
  const listen = tls
    ? [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        tls.certFile,
        '--tls-key-file',
        tls.keyFile,
        '--tls-ca-cert-file',
        tls.caFile,
        '--tls-auth-clients',
        'no',
      ]
    : ['--port', String(port)];

  const start = async () => {
    child = spawn(
      'redis-server',
      [
        ...listen,
        ...(password === undefined ? [] : ['--requirepass', password]),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    await eventually(
      async () => {
        const probe = new Redis(url, {
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
          ...(tls ? { tls: { ca: readFileSync(tls.caFile, 'utf8') } } : {}),
        });
        probe.on('error', () => undefined); // refused while the server starts; the poll retries
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } finally {
          probe.disconnect();
        }
      },
      10_000,
      'the private redis',
    );
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
