/**
 * Where the Redis log publishes. Each test has its own notice channel, under its hash tag (so on
 * Redis Cluster it lives in the slot of the test's keys). Changes go to one channel for the whole
 * log on one node; on Redis Cluster a script may publish (SPUBLISH) only to a channel of its own
 * keys' slot, so there is one change channel per slot, `{prefix}:changes:{<tag>}`, where `<tag>` is
 * a short string chosen to hash to that slot. A replica with change subscribers subscribes to all
 * 16,384 of them (once, on its first subscriber); each change still reaches only the shard of its
 * test, and from there the replicas that listen.
 */
import calculateSlot from 'cluster-key-slot';

/** The channels of one log. */
export interface RedisChannels {
  /** The change channel `publish`es of the test whose keys include `key` go to. */
  changeChannelOf(key: string): string;
  /** Every change channel, to subscribe to. */
  changeChannels(): readonly string[];
}

const SLOTS = 16_384;
let tags: string[] | undefined;

/** A short hash tag for every slot: `tags[slot]` hashes to `slot`. Computed once (tens of milliseconds). */
export function slotTags(): readonly string[] {
  if (tags !== undefined) return tags;
  const found = new Array<string>(SLOTS);
  let left = SLOTS;
  for (let i = 0; left > 0; i++) {
    const tag = i.toString(36);
    const slot = calculateSlot(tag);
    if (found[slot] === undefined) {
      found[slot] = tag;
      left -= 1;
    }
  }
  tags = found;
  return found;
}

/** Creates the channel names of a log under `prefix`; `sharded` on Redis Cluster. */
export function createRedisChannels(prefix: string, sharded: boolean): RedisChannels {
  if (!sharded) {
    const channel = `${prefix}:changes`;
    return { changeChannelOf: () => channel, changeChannels: () => [channel] };
  }
  return {
    changeChannelOf: (key) => `${prefix}:changes:{${slotTags()[calculateSlot(key)] as string}}`,
    changeChannels: () => slotTags().map((tag) => `${prefix}:changes:{${tag}}`),
  };
}
