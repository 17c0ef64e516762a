/**
 * `createRedisConnection`: the one place that opens a Redis connection, for every part of the
 * service (the result log and its notices, the rate limits, the embedded issuer's storage), in
 * each of the three shapes `REDIS_MODE` names: one node, a Redis Cluster, a Sentinel-managed
 * primary.
 */
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConfig } from '../config/redis.js';
import type { RedisClient } from './redis-client.js';
import type { Logger } from '../base/logger.js';
import { startHeartbeat } from './redis-heartbeat.js';

/**
 * Opens one Redis connection as every part of the service uses it: no offline queue, so while
 * Redis is down commands fail at once (503 for reads, the consumer stops committing) instead of
 * piling up in memory; a command timeout, so a Redis that hangs (rather than refusing) does not
 * hang requests; a socket timeout, so a connection that went silent (no answer and no reset: a
 * network or a proxy that stopped carrying packets) is given up and opened again instead of
 * timing out every command for as long as the kernel keeps it (a subscriber connection is asked a
 * PING every few seconds for it: redis-heartbeat.ts); auto-pipelining, so the commands a step
 * sends together share a round trip (per node on a cluster); `rediss://` turns TLS on (ioredis
 * reads it, and the credentials, from the URL), and a private CA replaces the public ones. On
 * Redis Cluster and Sentinel, `REDIS_URL` gives the scheme and the data nodes' credentials; the
 * nodes come from the topology.
 */
export function createRedisConnection(config: RedisConfig, logger: Logger, role: string, use: RedisUse = {}): RedisClient {
  const log = logger.child({ component: 'redis' });
  const client = open(config, role, use.subscriber === true);
  // On a cluster the subscriber's connections are ioredis' own (one per primary): ioredis pings
  // them itself (`shardedSubscriberHealthCheckInterval`, 10 s), and the tails re-read every 2 s
  // there whatever becomes of them (redis-result-log.ts).
  if (use.subscriber === true && client instanceof Redis) startHeartbeat(client);
  client.on('error', (error: Error) => log.warn({ role, err: error.message }, 'redis connection error'));
  if (client.isCluster) client.on('node error', (error: Error, node: string) => log.warn({ role, node, err: error.message }, 'redis cluster node error'));
  return client;
}

/** How a connection is used. */
export interface RedisUse {
  /** For pub/sub only: on Redis Cluster it gets a sharded subscriber per primary. */
  readonly subscriber?: boolean;
}

/** `role` names the connection (`CLIENT LIST` shows `rcs-<role>`). */
function open(config: RedisConfig, role: string, subscriber: boolean): RedisClient {
  const topology = config.topology;
  // A private CA, for the nodes and (through Sentinel) the sentinels alike.
  const tlsOptions: ConnectionOptions = config.tlsCa === null ? {} : { ca: config.tlsCa };
  const common: RedisOptions = {
    // RESP2, as ioredis 5 spoke it (ioredis 6 defaults to RESP3): the failover behaviour the tests
    // and docs/redis-and-replicas.md measured is RESP2's, and under RESP3 a refused HELLO (a
    // missing password) closes the connection, so commands fail with "Connection is closed"
    // instead of NOAUTH.
    protocol: 2,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs(config),
    socketTimeout: commandTimeoutMs(config) + COMMAND_TIMEOUT_MS,
    connectionName: `rcs-${role}`,
    ...(config.tlsCa === null ? {} : { tls: tlsOptions }),
  };
  if (topology.mode === 'standalone') return new Redis(config.url, { ...common, enableAutoPipelining: true });
  const url = new URL(config.url);
  const tls = url.protocol === 'rediss:' ? { tls: tlsOptions } : {};
  const credentials = {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
  };
  if (topology.mode === 'sentinel') {
    return new Redis({
      ...common,
      ...credentials,
      ...tls,
      enableAutoPipelining: true,
      sentinels: topology.sentinels.map(({ host, port }) => ({ host, port })),
      name: topology.masterName,
      ...(topology.sentinelUsername === null ? {} : { sentinelUsername: topology.sentinelUsername }),
      ...(topology.sentinelPassword === null ? {} : { sentinelPassword: topology.sentinelPassword }),
      // TLS to the sentinels and to the nodes they name, as `rediss://` asks.
      ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true, sentinelTLS: tlsOptions } : {}),
    });
  }
  const { enableOfflineQueue: _nodesQueue, ...nodeOptions } = common;
  const options: ClusterOptions = {
    enableOfflineQueue: false,
    // On the subscriber too: a replica's first change subscriber subscribes to 16,384 change
    // channels (one SSUBSCRIBE each, a channel per slot), which go out batched instead of one
    // write each (one at a time they outlast the command timeout on a busy machine). The tails
    // re-read every 2 s on a cluster, whatever becomes of a subscription in a failover.
    enableAutoPipelining: true,
    // A subscriber listens on every primary (sharded pub/sub); ioredis follows failovers and slot moves.
    shardedSubscribers: subscriber,
    // How long the cluster may take to name its slots: ioredis asks CLUSTER SLOTS on a connection
    // opened for it, whose handshake (AUTH, the name) is answered first, so two answers, each given
    // a command's time. ioredis' own 1 s for both timed out every refresh on a busy machine, and
    // a client stayed `connecting` as long as the load lasted while the nodes answered commands.
    slotsRefreshTimeout: 2 * COMMAND_TIMEOUT_MS,
    // Redirections and failovers are retried by ioredis itself, a little apart, within the command timeout.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    // The cluster fails fast while it is not ready (above); a node's own connection is opened
    // lazily by ioredis on its first command, which must wait for it rather than fail, so the
    // nodes keep ioredis' own offline queue.
    redisOptions: { ...nodeOptions, ...credentials, ...tls },
  };
  return new Cluster(
    topology.nodes.map(({ host, port }) => ({ host, port })),
    options,
  );
}

/**
 * How long a command may take before it fails, when it does not wait for replicas. A connection
 * that answers nothing for that long again after its commands timed out (the socket timeout: the
 * command timeout and this once more) is given up: the longest a command waits in Redis is a
 * WAIT's, which the command timeout covers. A socket timeout as short as the command timeout
 * would also drop connections whose answer is only late (a loaded machine runs its timers first).
 */
const COMMAND_TIMEOUT_MS = 2000;

/**
 * The command timeout of every connection: 2 s, and with `REDIS_WAIT_REPLICAS` the WAIT's own
 * timeout on top, since a WAIT blocks that long before it answers how many replicas hold the write
 * (a shorter limit would fail every write a slow replica holds within `REDIS_WAIT_TIMEOUT_MS`, and
 * name the wrong cause).
 */
function commandTimeoutMs(config: RedisConfig): number {
  return COMMAND_TIMEOUT_MS + (config.wait.replicas > 0 ? config.wait.timeoutMs : 0);
}
