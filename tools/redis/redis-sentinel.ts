/**
 * A Sentinel-managed Redis on 127.0.0.1 for tests and local runs: one primary, one replica and
 * (by default) three sentinels with a quorum of two, tuned so a killed primary is replaced within
 * a few seconds.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseArgs, createNode, type ManagedNode, type RedisNode } from './redis-node.js';
import { command, freePort, infoFields, startWatchdog, until } from './redis-process.js';

const HEALTHY_TIMEOUT_MS = 30_000;
const BIND_ATTEMPTS = 3;

/** What to start. */
export interface RedisSentinelOptions {
  /** Sentinels; the quorum is a majority of them. Default 3. */
  readonly sentinels?: number;
  /** The name the sentinels monitor the primary under. Default 'rcs'. */
  readonly masterName?: string;
  /** `requirepass` (and `masterauth`) of the primary and the replica; the sentinels are given it too. */
  readonly password?: string;
  /** `requirepass` of the sentinels themselves (clients then need it as the sentinel password). */
  readonly sentinelPassword?: string;
  /** `down-after-milliseconds`: how long the primary may not answer before it is failed over. Default 1000. */
  readonly downAfterMs?: number;
  /** Process groups of their own, so a Ctrl-C at the terminal reaches only this process. */
  readonly detached?: boolean;
}

/** A running Sentinel set. */
export interface RedisSentinelSet {
  readonly masterName: string;
  /** `127.0.0.1:port` of every sentinel. */
  readonly sentinels: string[];
  /** The primary and the replica, the primary first as started (roles change with failovers). */
  readonly nodes: readonly RedisNode[];
  /** The folder of data, configuration and logs. */
  readonly dir: string;
  /** The current master as the first sentinel that answers reports it. */
  primary(): Promise<RedisNode>;
  /**
   * Waits until both servers run, one is master and the other its replica with the link up, and
   * every sentinel names that master, is not alarmed about it, and knows the others and the replica.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Stops sentinels and servers and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts a Sentinel set and resolves once it is healthy (tried again on fresh ports if a port was taken). */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinelSet> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= BIND_ATTEMPTS || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

/** A sentinel's configuration file (Sentinel rewrites it with what it learns, so it must be writable). */
function sentinelConf(port: number, dir: string, primaryPort: number, name: string, quorum: number, options: RedisSentinelOptions): string {
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    `logfile ${join(dir, 'redis.log')}`,
    `sentinel monitor ${name} 127.0.0.1 ${primaryPort} ${quorum}`,
    `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
    // Short, so a failover that stalls is retried soon (Sentinel waits twice this before a retry).
    `sentinel failover-timeout ${name} 5000`,
    `sentinel parallel-syncs ${name} 1`,
  ];
  if (options.password !== undefined) lines.push(`sentinel auth-pass ${name} ${options.password}`);
  if (options.sentinelPassword !== undefined) lines.push(`requirepass ${options.sentinelPassword}`, `sentinel sentinel-pass ${options.sentinelPassword}`);
  return `${lines.join('\n')}\n`;
}

async function startOnce(options: RedisSentinelOptions): Promise<RedisSentinelSet> {
  const name = options.masterName ?? 'rcs';
  const count = options.sentinels ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error(`sentinels must be a positive whole number, got ${count}`);
  const quorum = Math.floor(count / 2) + 1;
  const root = await mkdtemp(join(tmpdir(), 'rcs-redis-sentinel-'));
  const watchdog = startWatchdog(root, true);
  const sentinelPorts: number[] = [];
  const masterPort = async () =>
    Number(((await askSentinels(sentinelPorts, options.sentinelPassword, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name])) as string[])[1]);
  const servers = await createServers(root, options, masterPort);
  const sentinels: ManagedNode[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const dir = join(root, `sentinel-${port}`);
    await mkdir(dir, { recursive: true });
    const conf = join(dir, 'sentinel.conf');
    await writeFile(conf, sentinelConf(port, dir, servers[0]?.port as number, name, quorum, options));
    sentinelPorts.push(port);
    sentinels.push(
      createNode({
        port,
        dir,
        args: [conf, '--sentinel'],
        password: options.sentinelPassword,
        detached: options.detached ?? false,
        rejoined: async () => true,
      }),
    );
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Sentinels first, so none starts a failover while the servers go down.
      await Promise.all(sentinels.map((s) => s.halt('SIGTERM')));
      await Promise.all(servers.map((s) => s.halt('SIGTERM')));
      watchdog.kill('SIGTERM');
      await rm(root, { recursive: true, force: true });
    })());
  const waitHealthy = async (timeoutMs = HEALTHY_TIMEOUT_MS): Promise<void> =>
    void (await until('the Redis Sentinel set to be healthy', timeoutMs, () => sentinelHealthy(servers, sentinels, name), 200));

  try {
    for (const server of servers) await server.launch();
    await Promise.all(sentinels.map((s) => s.launch()));
    await waitHealthy();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    masterName: name,
    sentinels: sentinels.map((s) => s.address),
    nodes: servers,
    dir: root,
    async primary() {
      const port = await masterPort();
      return servers.find((s) => s.port === port) ?? Promise.reject(new Error(`the sentinels name 127.0.0.1:${port}, which this helper did not start`));
    },
    waitHealthy,
    stop,
  };
}

/** The primary and the replica, not started yet; `masterPort` asks the sentinels for the current master. */
async function createServers(root: string, options: RedisSentinelOptions, masterPort: () => Promise<number>): Promise<ManagedNode[]> {
  const servers: ManagedNode[] = [];
  const rejoined = async (node: ManagedNode) => {
    const master = await masterPort();
    if (node.port === master) return (await node.role()) === 'master';
    const info = infoFields(await node.call('INFO', 'replication'));
    return info.get('master_port') === String(master) && info.get('master_link_status') === 'up';
  };
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const dir = join(root, `server-${port}`);
    let started = false;
    // The first start makes servers[0] the primary. A restart comes back as a replica of the master
    // the sentinels name, as an orchestrator restarting a pod would configure it: left to itself a
    // returning old primary is converted by Sentinel too, but only after ~10-20 s of serving as a
    // second, stale master (Sentinel first watches it report that role for a while).
    const args = async () => {
      const primaryPort = started ? await masterPort() : servers[0]?.port;
      started = true;
      return [...baseArgs(port, dir, options.password), ...(primaryPort === port ? [] : ['--replicaof', '127.0.0.1', String(primaryPort)])];
    };
    servers.push(createNode({ port, dir, args, password: options.password, detached: options.detached ?? false, rejoined }));
  }
  return servers;
}

/** Asks the sentinels in turn; the first answer counts (a sentinel may be down or paused). */
async function askSentinels(ports: readonly number[], password: string | undefined, args: readonly string[]): Promise<unknown> {
  let last: unknown;
  for (const port of ports) {
    try {
      return await command(port, password, args);
    } catch (error) {
      last = error;
    }
  }
  throw last instanceof Error ? last : new Error('no sentinel answered');
}

/** A flat `[field, value, ...]` answer (SENTINEL MASTER, SENTINEL REPLICAS entries) as a map. */
function pairs(answer: unknown): Map<string, string> {
  const list = answer as string[];
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < list.length; i += 2) map.set(String(list[i]), String(list[i + 1]));
  return map;
}

async function sentinelHealthy(servers: readonly ManagedNode[], sentinels: readonly ManagedNode[], name: string): Promise<boolean> {
  if ([...servers, ...sentinels].some((n) => !n.live)) return false;
  const masters = new Set<string>();
  for (const sentinel of sentinels) {
    const [, port] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
    masters.add(String(port));
    const master = pairs(await sentinel.call('SENTINEL', 'MASTER', name));
    if (master.get('flags') !== 'master' || master.get('num-other-sentinels') !== String(sentinels.length - 1)) return false;
    const replicas = ((await sentinel.call('SENTINEL', 'REPLICAS', name)) as unknown[]).map(pairs);
    // The replication link itself is checked on the servers below: a sentinel refreshes its copy
    // of a replica's link status only every 10 s while the master is fine.
    if (replicas.length !== servers.length - 1 || replicas.some((r) => r.get('flags') !== 'slave')) return false;
  }
  if (masters.size !== 1) return false;
  const masterPort = [...masters][0];
  for (const server of servers) {
    const info = infoFields(await server.call('INFO', 'replication'));
    const ok =
      String(server.port) === masterPort ? info.get('role') === 'master' : info.get('master_port') === masterPort && info.get('master_link_status') === 'up';
    if (!ok) return false;
  }
  return true;
}
