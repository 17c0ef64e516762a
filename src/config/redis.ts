/**
 * The Redis part of the configuration: where the shared state lives and how to reach it. Managed
 * Redis services want TLS and a password: `REDIS_URL` takes `rediss://` (TLS) and the credentials
 * in the URL (`rediss://:password@host:6380` or `rediss://user:password@host:6380/0`), and
 * `REDIS_TLS_CA_FILE` names the CA to trust when the service's certificate is not signed by a
 * public one. `REDIS_MODE` picks the shape: one node (`standalone`), a Redis Cluster reached
 * through seed nodes (`cluster`), or a primary found through Sentinel (`sentinel`); in the last
 * two, `REDIS_URL` still gives the scheme (TLS or not) and the data nodes' credentials, and its
 * host is not used. Errors name the variable and never repeat a password.
 */
import { ConfigError } from '../base/errors.js';
import type { Reader } from './reader.js';

/** One node's address. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** Which Redis deployment the service talks to. */
export type RedisTopology =
  | { readonly mode: 'standalone' }
  /** A Redis Cluster, found from these seed nodes (any of them will do; the client learns the rest). */
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[] }
  /** A primary with replicas, watched by Sentinel: the client asks the sentinels where the primary is. */
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      readonly masterName: string;
      /** The sentinels' own credentials, when they require some (not the data nodes'). */
      readonly sentinelUsername: string | null;
      readonly sentinelPassword: string | null;
    };

/**
 * How to reach Redis (`config.redis`), for every part that keeps its state there: the result log
 * (`STATE_STORE=redis`), the rate limits (`RATE_LIMITS_STORE`) and the embedded issuer
 * (`OIDC_STORE`).
 */
export interface RedisConfig {
  /** `redis://` or `rediss://` (TLS), with the credentials if any (`REDIS_URL`). */
  readonly url: string;
  /** PEM certificates to trust for `rediss://` instead of the public CAs; null to use those. */
  readonly tlsCa: string | null;
  /** Standalone, Cluster or Sentinel (`REDIS_MODE`). */
  readonly topology: RedisTopology;
  /** Replicas that must hold a write before it counts as stored (`REDIS_WAIT_REPLICAS`), and for how long to wait. */
  readonly wait: { readonly replicas: number; readonly timeoutMs: number };
  /** Prefix of every Redis key and channel, so deployments can share one Redis (`REDIS_KEY_PREFIX`). */
  readonly keyPrefix: string;
}

const SENTINEL_ONLY = [
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER_NAME',
  'REDIS_SENTINEL_USERNAME',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_SENTINEL_PASSWORD_FILE',
] as const;
const DEFAULT_URL = 'redis://127.0.0.1:6379';
const ADDRESS = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/;

/** The URL with its password replaced, for messages. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/**
 * Reads REDIS_URL, REDIS_TLS_CA_FILE, REDIS_MODE and the mode's settings, checked only when some
 * part of the process uses Redis (`used`): a process that never connects carries the defaults.
 */
export function readRedisConfig(read: Reader, used: boolean): RedisConfig {
  const keyPrefix = read.string('REDIS_KEY_PREFIX', 'rcs');
  if (!used) return { url: read.string('REDIS_URL', DEFAULT_URL), tlsCa: null, topology: STANDALONE, wait: NO_WAIT, keyPrefix };
  const redisUrl = read.optional('REDIS_URL') ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(redisUrl);
  } catch {
    throw new ConfigError('REDIS_URL', `expected a redis:// or rediss:// URL, got "${redactRedisUrl(redisUrl)}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `expected a redis:// or rediss:// URL (rediss:// for TLS), got the scheme "${parsed.protocol}"`);
  }
  if (parsed.hostname === '') throw new ConfigError('REDIS_URL', 'names no host');
  const topology = readTopology(read);
  const wait = {
    replicas: read.int('REDIS_WAIT_REPLICAS', defaultWaitReplicas(topology), { min: 0, max: 16 }),
    timeoutMs: read.int('REDIS_WAIT_TIMEOUT_MS', 1000, { min: 1, max: 60_000 }),
  };
  if (read.optional('REDIS_TLS_CA_FILE') === undefined) return { url: redisUrl, tlsCa: null, topology, wait, keyPrefix };
  if (parsed.protocol !== 'rediss:') throw new ConfigError('REDIS_TLS_CA_FILE', 'is set, but REDIS_URL is not a rediss:// (TLS) URL');
  return { url: redisUrl, tlsCa: read.certificates('REDIS_TLS_CA_FILE'), topology, wait, keyPrefix };
}

/** The standalone default: what a process that never connects to Redis carries. */
export const STANDALONE: RedisTopology = { mode: 'standalone' };
/** No waiting for replicas: what a process that never connects to Redis carries. */
export const NO_WAIT = { replicas: 0, timeoutMs: 1000 } as const;

/**
 * `REDIS_WAIT_REPLICAS` when unset: 1 where Redis has replicas to fail over to (Cluster, Sentinel),
 * 0 on one node. Redis replicates asynchronously, so without the wait a failover can drop writes the
 * consumer has already committed: the safe choice is the default, and not waiting (faster writes,
 * or a shape with no replica) is the one to ask for.
 */
function defaultWaitReplicas(topology: RedisTopology): number {
  return topology.mode === 'standalone' ? 0 : 1;
}

function readTopology(read: Reader): RedisTopology {
  const mode = read.oneOf('REDIS_MODE', 'standalone', ['standalone', 'cluster', 'sentinel']);
  const only = (names: ReadonlyArray<Parameters<Reader['optional']>[0]>, where: string) => {
    for (const name of names) if (read.optional(name) !== undefined) throw new ConfigError(name, `is set, but REDIS_MODE is not ${where}`);
  };
  if (mode === 'cluster') {
    only(SENTINEL_ONLY, 'sentinel');
    return { mode, nodes: addresses(read, 'REDIS_CLUSTER_NODES', 'with REDIS_MODE=cluster') };
  }
  only(['REDIS_CLUSTER_NODES'], 'cluster');
  if (mode === 'standalone') {
    only(SENTINEL_ONLY, 'sentinel');
    return STANDALONE;
  }
  const masterName = read.optional('REDIS_SENTINEL_MASTER_NAME');
  if (masterName === undefined)
    throw new ConfigError('REDIS_SENTINEL_MASTER_NAME', 'is required with REDIS_MODE=sentinel (the name the sentinels monitor the primary under)');
  return {
    mode,
    sentinels: addresses(read, 'REDIS_SENTINELS', 'with REDIS_MODE=sentinel'),
    masterName,
    sentinelUsername: read.optional('REDIS_SENTINEL_USERNAME') ?? null,
    sentinelPassword: read.secret('REDIS_SENTINEL_PASSWORD', 'REDIS_SENTINEL_PASSWORD_FILE'),
  };
}

/** A required list of `host:port`. */
function addresses(read: Reader, name: 'REDIS_CLUSTER_NODES' | 'REDIS_SENTINELS', when: string): RedisAddress[] {
  if (read.optional(name) === undefined) throw new ConfigError(name, `is required ${when} (a comma-separated list of host:port)`);
  return read.list(name, [], ADDRESS, 'host:port').map((entry) => {
    const at = entry.lastIndexOf(':');
    const port = Number(entry.slice(at + 1));
    if (port < 1 || port > 65_535) throw new ConfigError(name, `"${entry}" has no valid port`);
    return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
  });
}
