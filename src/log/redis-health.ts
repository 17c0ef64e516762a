/**
 * The store's readiness check on each Redis shape. One node (standalone, or the primary Sentinel
 * names): it answers PING. A Redis Cluster: every slot has a primary (as the first primary to
 * answer sees the layout, `CLUSTER SLOTS`) and a read of each slot range is answered; while a killed primary's replica is not yet
 * promoted its slots are served by nobody, and the tests they hold can be neither read nor
 * written, which is an outage, even though the other shards answer.
 */
import type { Cluster } from 'ioredis';
import { slotTags } from './redis-channels.js';
import type { RedisClient } from './redis-pubsub.js';

const SLOTS = 16_384;
const ANSWER_MS = 1000;

/** Resolves when the Redis behind `redis` can serve every key; rejects with what is wrong. */
export async function checkRedis(redis: RedisClient): Promise<void> {
  if (!redis.isCluster) {
    await redis.ping();
    return;
  }
  const cluster = redis as Cluster;
  // The layout as the first primary to answer sees it (a node that is down would not answer).
  const ranges = (await Promise.any(cluster.nodes('master').map((node) => node.cluster('SLOTS')))) as unknown as Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>;
  const covered = ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  if (covered < SLOTS) throw new Error(`${SLOTS - covered} slots have no primary`);
  // One read per slot range, routed as any command of that range is: it fails while the range's
  // primary is down or not yet replaced, whatever the client's pool still holds.
  // ioredis retries a range whose primary is down until the failover is over: past a second, the
  // range counts as down.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a slot range did not answer within ${ANSWER_MS} ms`)), ANSWER_MS);
  });
  try {
    await Promise.race([Promise.all(ranges.map(([from]) => cluster.exists(`{${slotTags()[from] as string}}`))), late]);
  } finally {
    clearTimeout(timer);
  }
}
