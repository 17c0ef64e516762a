/**
 * A real Redis Cluster on 127.0.0.1 for tests and local runs: N primaries with M replicas each,
 * every node a `redis-server --cluster-enabled yes` process on free ports, joined with
 * `redis-cli --cluster create`. The Sentinel set lives in redis-sentinel.ts and is re-exported here.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterHealthy, clusterRejoined, liveViews, masterOfSlot, parseClusterNodes } from './cluster-view.js';
import { baseArgs, createNode, type ManagedNode, type RedisNode } from './redis-node.js';
import { freePort, startWatchdog, until } from './redis-process.js';
import type { RedisSentinelSet } from './redis-sentinel.js';

export type { RedisNode } from './redis-node.js';
export { startRedisSentinel, type RedisSentinelOptions, type RedisSentinelSet } from './redis-sentinel.js';

/** How long a new cluster may take to become healthy, and the default bound of waitHealthy(). */
const HEALTHY_TIMEOUT_MS = 30_000;
/** How many times a start is tried again on fresh ports when another process took one of them. */
const BIND_ATTEMPTS = 3;

/** What to start. */
export interface RedisClusterOptions {
  /** Primaries (each serves a share of the 16384 slots). Default 3, the least Redis Cluster accepts. */
  readonly primaries?: number;
  /** Replicas of each primary. Default 1. */
  readonly replicasPerPrimary?: number;
  /** `requirepass` (and `masterauth`) of every node. */
  readonly password?: string;
  /**
   * `cluster-node-timeout`: how long a primary may be unreachable before it is failed over.
   * Default 2000 ms (Redis's own default is 15 s), so a failover takes a few seconds.
   */
  readonly nodeTimeoutMs?: number;
  /** Runs the nodes in process groups of their own, so a Ctrl-C at the terminal reaches only this process. */
  readonly detached?: boolean;
}

/** A running cluster. */
export interface RedisCluster {
  /** Every node, primaries first as created (roles change with failovers: ask `role()`). */
  readonly nodes: readonly RedisNode[];
  /** `127.0.0.1:port` of every node, the seed list for a cluster client. */
  readonly seeds: string[];
  /** The folder of the nodes' data, configuration and logs (`node-<port>/redis.log`). */
  readonly dir: string;
  /**
   * The node serving `key`'s slot as master now: of the masters the live nodes name for the slot,
   * the one with the newest config epoch. Fails while no live, unflagged master serves it.
   */
  primaryOf(key: string): Promise<RedisNode>;
  /** The replica (the first, if several) of a master, as a live node other than it sees the cluster. */
  replicaOf(node: RedisNode): Promise<RedisNode>;
  /** Every replica of a master, as a live node other than it sees the cluster. */
  replicasOf(node: RedisNode): Promise<RedisNode[]>;
  /**
   * Waits until every node runs and answers, says cluster_state:ok with every slot served, every
   * primary has its replicas with links up, and all nodes agree on the layout.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Stops every node (SIGTERM, then SIGKILL) and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts a cluster and resolves once it is healthy. Ports are picked free and bound a moment
 * later: if another process took one in between, the start is tried again on fresh ports.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= BIND_ATTEMPTS || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

/** The arguments of a cluster node, each choice made for fast, reliable failover tests. */
function clusterArgs(port: number, busPort: number, dir: string, options: RedisClusterOptions): string[] {
  return [
    ...baseArgs(port, dir, options.password),
    '--cluster-enabled',
    'yes',
    // The bus port is picked free too: the default (port + 10000) can be taken or beyond 65535.
    '--cluster-port',
    String(busPort),
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(options.nodeTimeoutMs ?? 2000),
    // A replica promotes itself however long it was cut off from its primary (by default it
    // refuses after node-timeout × 10 without a link), so a failover after a pause or a slow
    // machine's hiccup still happens and a test does not hang on a cluster that stays down.
    '--cluster-replica-validity-factor',
    '0',
    // The other shards keep serving while one is failing over: a test sees the outage only on the
    // keys of the failed shard, as with a managed cluster. waitHealthy() checks coverage itself.
    '--cluster-require-full-coverage',
    'no',
    // Replicas stay with the primary they were given, so "every primary has its replicas" is stable.
    '--cluster-allow-replica-migration',
    'no',
    // Reads are refused while the cluster is down (the default, said for clarity): serving them
    // from a node cut off from the majority would hide stale reads from a failover test.
    '--cluster-allow-reads-when-down',
    'no',
  ];
}

async function startOnce(options: RedisClusterOptions): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicasPerPrimary ?? 1;
  if (!Number.isInteger(primaries) || primaries < 3) throw new Error(`a Redis Cluster needs at least 3 primaries, got ${primaries}`);
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`replicasPerPrimary must be a whole number, got ${replicas}`);
  const root = await mkdtemp(join(tmpdir(), 'rcs-redis-cluster-'));
  const watchdog = startWatchdog(root, true);
  const nodes: ManagedNode[] = [];
  for (let i = 0; i < primaries * (1 + replicas); i++) {
    const port = await freePort();
    const dir = join(root, `node-${port}`);
    const args = clusterArgs(port, await freePort(), dir, options);
    const spec = { port, dir, args, password: options.password, detached: options.detached ?? false };
    nodes.push(createNode({ ...spec, rejoined: (node) => clusterRejoined(node, nodes) }));
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(nodes.map((n) => n.halt('SIGTERM')));
      watchdog.kill('SIGTERM');
      await rm(root, { recursive: true, force: true });
    })());
  const waitHealthy = async (timeoutMs = HEALTHY_TIMEOUT_MS): Promise<void> =>
    void (await until('the Redis cluster to be healthy', timeoutMs, () => clusterHealthy(nodes, primaries, replicas), 200));

  try {
    await Promise.all(nodes.map((n) => n.launch()));
    await createCluster(nodes, replicas, options.password);
    await waitHealthy();
  } catch (error) {
    await stop();
    throw error;
  }

  return { nodes, seeds: nodes.map((n) => n.address), dir: root, ...queries(nodes), waitHealthy, stop };
}

/** Who serves what, asked of the live nodes. */
function queries(nodes: readonly ManagedNode[]): Pick<RedisCluster, 'primaryOf' | 'replicaOf' | 'replicasOf'> {
  const asker = (not?: RedisNode) => {
    const node = nodes.find((n) => n.live && n !== not);
    if (node === undefined) throw new Error('no live node of the Redis cluster to ask');
    return node;
  };
  const byPort = (port: number) => nodes.find((n) => n.port === port) ?? unknownNode(port);
  const replicasOf = async (primary: RedisNode) => {
    const view = parseClusterNodes(await asker(primary).call('CLUSTER', 'NODES'));
    const id = view.find((e) => e.port === primary.port)?.id;
    return view.filter((e) => e.role === 'slave' && e.masterId === id).map((e) => byPort(e.port));
  };
  return {
    async primaryOf(key) {
      const slot = Number(await asker().call('CLUSTER', 'KEYSLOT', key));
      const master = masterOfSlot((await liveViews(nodes)).values(), slot);
      if (master === undefined) throw new Error(`no master serves slot ${slot} (of ${JSON.stringify(key)}) now, as the live nodes see it`);
      return byPort(master.port);
    },
    replicasOf,
    async replicaOf(primary) {
      const found = await replicasOf(primary);
      return found[0] ?? Promise.reject(new Error(`${primary.address} has no replica`));
    },
  };
}

/** Joins the nodes with redis-cli: the first `nodes / (1 + replicas)` become the primaries. */
async function createCluster(nodes: readonly ManagedNode[], replicas: number, password: string | undefined): Promise<void> {
  const auth = password === undefined ? [] : ['-a', password, '--no-auth-warning'];
  try {
    await promisify(execFile)(
      'redis-cli',
      [...auth, '--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { timeout: 60_000 },
    );
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`redis-cli --cluster create failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim(), { cause: error });
  }
  // redis-cli waits for the nodes to meet; the views converge a moment later (waitHealthy).
  await until('every node to know the others', 10_000, async () => [...(await liveViews(nodes)).values()].every((v) => v.length === nodes.length), 100);
}

function unknownNode(port: number): never {
  throw new Error(`the cluster names a node on port ${port} that this helper did not start`);
}

/**
 * The service's settings for a cluster started here: `STATE_STORE=redis`, `REDIS_MODE=cluster`
 * and the seed list. A password is not included (pass it the way the service's settings take it).
 */
export function clusterEnv(cluster: Pick<RedisCluster, 'seeds'>): Record<string, string> {
  return { STATE_STORE: 'redis', REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: cluster.seeds.join(',') };
}

/** The service's settings for a Sentinel set started here (as clusterEnv, without a password). */
export function sentinelEnv(set: Pick<RedisSentinelSet, 'sentinels' | 'masterName'>): Record<string, string> {
  return { STATE_STORE: 'redis', REDIS_MODE: 'sentinel', REDIS_SENTINELS: set.sentinels.join(','), REDIS_SENTINEL_MASTER_NAME: set.masterName };
}
