/**
 * The store's readiness check on each Redis shape. First the service's own connections: the
 * command connection, the subscriber connection live reads depend on, and the writes' own
 * connection when they have one, must be `ready` (ioredis' own state), since with no offline queue every command sent while one of them connects or
 * reconnects is refused ("Cluster isn't ready and enableOfflineQueue options is false", "Stream
 * isn't writeable") even when Redis itself is fine. Then Redis: one node (standalone, or the
 * primary Sentinel names) answers PING; a Redis Cluster, every primary the client's slot map names
 * is in its pool (a killed one leaves the pool at once), every primary the client knows answers PING
 * (a hung one holds its slots long before the cluster notices), and the cluster's own view, `CLUSTER INFO` as
 * the first primary to answer gives it, must have every slot served (`cluster_slots_ok` 16384): from
 * the moment the other nodes flag a primary as failing (`cluster-node-timeout`) until its replica
 * is promoted, the slots it held can be neither read nor written, which is an outage for the tests
 * they hold even though the other shards answer. Asked of the cluster rather than through the
 * client's slot map, which ioredis updates on its own schedule.
 */
import type { Cluster } from 'ioredis';
import type { RedisClient } from './redis-client.js';

const SLOTS = 16_384;

/**
 * Resolves when the Redis behind `redis` can serve every key and the service's connections to it
 * are ready; rejects with what is wrong.
 */
export async function checkRedis(redis: RedisClient, others: { readonly subscriber?: RedisClient; readonly writer?: RedisClient } = {}): Promise<void> {
  for (const [name, client] of [
    ['command', redis],
    ['subscriber', others.subscriber],
    // Its own state only: a write's WAIT may hold it (redis-result-log.ts), and a PING sent on it would wait behind it.
    ['writes', others.writer],
  ] as const) {
    // A connection that is `ready` answers at once; any other state refuses commands.
    if (client !== undefined && client.status !== 'ready') throw new Error(`the ${name} connection is ${client.status}`);
  }
  if (!redis.isCluster) {
    await redis.ping();
    return;
  }
  const cluster = redis as Cluster;
  const masters = cluster.nodes('master');
  // A primary killed outright leaves the client's pool at once (its connection ends and is not
  // retried), while the slots still map to it until the cluster fails it over: pinging the pool
  // alone would answer ready through that window, the cluster's own view too until node-timeout.
  const connected = new Set(masters.map((node) => `${node.options.host ?? ''}:${node.options.port ?? ''}`));
  for (const owners of cluster.slots) {
    const primary = owners?.[0];
    if (primary !== undefined && !connected.has(primary)) {
      // Asked to read the map again (ioredis does on a MOVED, which an idle replica never gets):
      // the next check sees the node back in the pool (refused by its PING) or its replica promoted.
      cluster.refreshSlotsCache();
      throw new Error(`the primary ${primary} of slots in the client's map is not connected`);
    }
  }
  // Every primary answers: one that hangs (a paused or wedged process) holds its slots' reads and
  // writes until the command timeout, long before the cluster flags it as failing.
  await Promise.all(
    masters.map((node) =>
      node.ping().catch((error: unknown) => {
        throw new Error(`the primary ${node.options.host ?? '?'}:${node.options.port ?? '?'} does not answer (${(error as Error).message})`);
      }),
    ),
  );
  const info = String(await Promise.any(masters.map((node) => node.cluster('INFO'))));
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  const served = Number(field('cluster_slots_ok'));
  if (field('cluster_state') !== 'ok' || served < SLOTS) {
    throw new Error(`the cluster serves ${Number.isNaN(served) ? 'no' : served} of ${SLOTS} slots (cluster_state ${field('cluster_state') ?? 'unknown'})`);
  }
}
