/**
 * HAProxy (Debian's package, which scripts/setup.sh installs) in front of service replicas, as
 * operators run it: round robin, health checks on `/readyz` (a draining replica answers 503 and
 * leaves the rotation), WebSockets and event streams carried as tunnels. Its runtime API (a Unix
 * socket) drops every connection it carries, which is how a test cuts the network between the
 * clients and the replicas.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tools/free-port.js';
import { eventually } from './graphql.js';

/** Where Debian installs it (/usr/sbin is not on every user's PATH). */
export const HAPROXY = '/usr/sbin/haproxy';

/** A running HAProxy. */
export interface LoadBalancer {
  /** `http://127.0.0.1:<port>` of its frontend. */
  readonly url: string;
  /** Drops every connection it carries, both sides (a network cut between the clients and the replicas). */
  cut(): Promise<void>;
  /** Whether HAProxy's health checks have server `name` up. */
  isUp(name: string): Promise<boolean>;
  /** What it logged so far: each server's state changes with the failed check's reason, and each request that failed. */
  log(): string;
  stop(): Promise<void>;
}

/** How HAProxy checks each server's `/readyz`. */
export interface HealthChecks {
  /** Between two checks. */
  readonly everyMs: number;
  /** Failed checks in a row that take a server out of rotation. */
  readonly fall: number;
  /** How long one check may take (HAProxy's default is `everyMs`). */
  readonly timeoutMs: number;
}

/**
 * Tests' checks: every 300 ms, out at the first failure, so that a draining replica leaves the
 * rotation at once. On a loaded machine a check can outlast 300 ms; a long run under load wants
 * checks as the docs recommend for production (docs/operations.md, Probes and alerts).
 */
const TEST_CHECKS: HealthChecks = { everyMs: 300, fall: 1, timeoutMs: 300 };

/** Starts HAProxy in front of `servers` (name → port on 127.0.0.1), checking `/readyz` as `checks` say. */
export async function startLoadBalancer(
  servers: ReadonlyArray<{ readonly name: string; readonly port: number }>,
  checks: HealthChecks = TEST_CHECKS,
): Promise<LoadBalancer> {
  const dir = mkdtempSync(join(tmpdir(), 'rcs-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const port = await freePort();
  const config = [
    'global',
    `  stats socket ${socket} mode 600 level admin`,
    '  log stderr format raw local0 info',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    // Requests that went well are not logged: only errors, and a server going down or up, and why.
    '  option dontlog-normal',
    '  option log-health-checks',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    // A WebSocket or an event stream lives as long as its subscriber: no idle timeout.
    '  timeout tunnel 1h',
    '  option redispatch',
    '  retries 2',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  timeout check ${checks.timeoutMs}ms`,
    `  default-server inter ${checks.everyMs}ms fall ${checks.fall} rise 1`,
    ...servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check`),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const admin = (command: string) =>
    new Promise<string>((resolve, reject) => {
      const conn = connect(socket);
      let answer = '';
      conn.on('data', (chunk) => (answer += chunk.toString()));
      conn.on('end', () => resolve(answer));
      conn.on('error', reject);
      conn.end(`${command}\n`);
    });
  await eventually(() => admin('show info').then((info) => info.includes('Pid:')), 10_000, `HAProxy to start (${stderr.trim()})`);
  return {
    url: `http://127.0.0.1:${port}`,
    cut: async () => {
      for (const server of servers) await admin(`shutdown sessions server replicas/${server.name}`);
    },
    log: () => stderr,
    isUp: async (name) => {
      const csv = await admin('show stat');
      const row = csv.split('\n').find((line) => line.startsWith(`replicas,${name},`));
      return row?.split(',')[17] === 'UP';
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
