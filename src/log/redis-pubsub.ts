/**
 * Pub/sub on the log's subscriber connection, the same for one Redis and for Redis Cluster. On one
 * node (standalone or a Sentinel-managed primary) it is classic pub/sub: SUBSCRIBE, `message`, and
 * ioredis subscribes again by itself after a reconnect (`ready`). On Redis Cluster it is sharded
 * pub/sub (Redis 7): SSUBSCRIBE, `smessage`; a notice is published to, and read from, the shard
 * that owns its channel's slot only, not broadcast over the cluster bus to every node. ioredis keeps
 * one subscriber connection per primary (`shardedSubscribers`) and subscribes them again after a
 * failover or a slot move (`subscribersReady`). An SSUBSCRIBE may name the channels of one slot
 * only, so channels are subscribed one command each. A subscribe made while the connection is
 * still being opened (as a replica starts) waits for it, up to {@link FIRST_CONNECT_WAIT_MS}: with
 * no offline queue, the command would otherwise fail at once.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from '../redis/redis-client.js';

/** Pub/sub over one subscriber connection. */
export interface RedisPubSub {
  /** `PUBLISH` or `SPUBLISH`: what the log's scripts publish with. */
  readonly publishCommand: 'PUBLISH' | 'SPUBLISH';
  subscribe(channels: readonly string[]): Promise<void>;
  unsubscribe(channels: readonly string[]): Promise<void>;
  /** Calls `handler` with every message; answers the function that stops it. */
  onMessage(handler: (channel: string, message: string) => void): () => void;
  /**
   * Calls `handler` each time the connection is subscribed again after a loss (a reconnect, a
   * failover, a slot move), when notices published meanwhile may have been missed; not on the
   * first connection. Answers the function that stops it.
   */
  onResubscribed(handler: () => void): () => void;
  /** Calls `handler` each time the subscriber connection is lost (notices may be missed until `onResubscribed`). */
  onLost(handler: () => void): () => void;
}

/** Creates the pub/sub of `subscriber` (a connection of its own: once it subscribes, Redis allows it nothing else). */
export function createRedisPubSub(subscriber: RedisClient): RedisPubSub {
  const sharded = subscriber.isCluster;
  // The channels subscribed through this object, subscribed again after a reconnect on one node.
  const subscribed = new Set<string>();
  const each = async (channels: readonly string[], call: (channel: string) => Promise<unknown>) => {
    await Promise.all(channels.map(call));
  };
  return {
    publishCommand: sharded ? 'SPUBLISH' : 'PUBLISH',
    async subscribe(channels) {
      const fresh = channels.filter((channel) => !subscribed.has(channel));
      // Listed before the command is answered: a reconnect meanwhile subscribes them again.
      for (const channel of fresh) subscribed.add(channel);
      if (fresh.length === 0) {
        // Already asked for: a no-op for Redis, awaited so the caller knows the subscription holds.
        if (!sharded && channels.length > 0) await subscriber.subscribe(...channels);
        return;
      }
      try {
        await firstConnection(subscriber);
        if (sharded) await each(fresh, (channel) => subscriber.ssubscribe(channel));
        else await subscriber.subscribe(...fresh);
      } catch (error) {
        for (const channel of fresh) subscribed.delete(channel);
        throw error;
      }
    },
    async unsubscribe(channels) {
      const gone = channels.filter((channel) => subscribed.delete(channel));
      if (gone.length === 0) return;
      if (sharded) await each(gone, (channel) => subscriber.sunsubscribe(channel));
      else await subscriber.unsubscribe(...gone);
    },
    onMessage(handler) {
      const event = sharded ? 'smessage' : 'message';
      subscriber.on(event, handler);
      return () => subscriber.off(event, handler);
    },
    onResubscribed(handler) {
      if (sharded) {
        // ioredis sends the SSUBSCRIBEs again and emits `subscribersReady` without waiting for
        // their answers, also on its first connection, and while a shard is down it retries (and
        // emits) many times a second: the handler runs at most every 200 ms, and once more a
        // second after the last event, when the subscriptions are surely in place.
        let last = 0;
        let trailing: NodeJS.Timeout | undefined;
        const listener = () => {
          if (Date.now() - last >= 200) {
            last = Date.now();
            handler();
          }
          clearTimeout(trailing);
          trailing = setTimeout(handler, 1000);
          trailing.unref();
        };
        subscriber.on('subscribersReady', listener);
        return () => {
          subscriber.off('subscribersReady', listener);
          clearTimeout(trailing);
        };
      }
      // The first `ready` is the first connection, not a return.
      let connectedOnce = (subscriber as Redis).status === 'ready';
      // ioredis subscribes again by itself after a reconnect; subscribing once more (a no-op for
      // Redis) and awaiting it makes sure every notice from now on arrives before the re-read.
      const listener = () => {
        if (!connectedOnce) {
          connectedOnce = true;
          return;
        }
        if (subscribed.size === 0) return handler();
        (subscriber as Redis).subscribe(...subscribed).then(handler, () => undefined);
      };
      subscriber.on('ready', listener);
      return () => subscriber.off('ready', listener);
    },
    onLost(handler) {
      // A cluster's sharded subscribers are lost one by one: `-node` names each.
      const events = sharded ? ['close', '-node'] : ['close'];
      for (const event of events) subscriber.on(event, handler);
      return () => {
        for (const event of events) subscriber.off(event, handler);
      };
    },
  };
}

/** How long a subscribe waits for a connection that is still being opened: the command timeout's 2 s. */
export const FIRST_CONNECT_WAIT_MS = 2000;

/** Resolves once `client` has opened its first connection (at once when it has, or when it lost one since). */
function firstConnection(client: RedisClient): Promise<void> {
  if (client.status !== 'wait' && client.status !== 'connecting' && client.status !== 'connect') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', ready);
      client.off('end', ended);
      if (error === undefined) resolve();
      else reject(error);
    };
    const ready = () => settle();
    const ended = () => settle(new Error('the subscriber connection ended before it was ready'));
    const timer = setTimeout(
      () => settle(new Error(`the subscriber connection was not ready within ${FIRST_CONNECT_WAIT_MS} ms (${client.status})`)),
      FIRST_CONNECT_WAIT_MS,
    );
    client.once('ready', ready);
    client.once('end', ended);
  });
}
