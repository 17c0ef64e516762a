/**
 * PubSub over Redis channels, one per correlation id, so a message consumed by one replica reaches
 * subscribers on every replica. Each replica subscribes only to the tests its clients follow.
 */
import type { Redis } from 'ioredis';
import type { TestMessageEvent } from '../domain/types.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventListener, PubSub } from './pubsub.js';

/** The channel prefix of a key prefix: events of test `id` go to `${eventChannelPrefix(prefix)}${id}`. */
export function eventChannelPrefix(prefix = 'rcs'): string {
  return `${prefix}:events:`;
}

/** Options of {@link createRedisPubSub}. */
export interface RedisPubSubOptions {
  /** Connection for PUBLISH (may be shared with the store). */
  readonly publisher: Redis;
  /** A dedicated connection: once it subscribes, Redis allows it nothing else. */
  readonly subscriber: Redis;
  readonly prefix?: string;
  readonly logger: Logger;
}

/** Creates the Redis {@link PubSub}. Neither connection is closed by it. */
export function createRedisPubSub(options: RedisPubSubOptions): PubSub & { listenerCount(correlationId?: string): number } {
  const prefix = eventChannelPrefix(options.prefix);
  const channels = new Map<string, Set<EventListener>>();
  const log = options.logger.child({ component: 'pubsub' });

  const onMessage = (channel: string, raw: string) => {
    const listeners = channels.get(channel);
    if (listeners === undefined) return;
    let event: TestMessageEvent;
    try {
      event = JSON.parse(raw) as TestMessageEvent;
    } catch (error) {
      log.error({ err: error, channel }, 'undecodable event on a PubSub channel');
      return;
    }
    for (const listener of [...listeners]) listener(event);
  };
  options.subscriber.on('message', onMessage);

  return {
    async publish(event) {
      await options.publisher.publish(`${prefix}${event.message.correlationId}`, JSON.stringify(event));
    },

    async subscribe(correlationId, listener) {
      const channel = `${prefix}${correlationId}`;
      let listeners = channels.get(channel);
      if (listeners === undefined) {
        listeners = new Set();
        channels.set(channel, listeners);
      }
      listeners.add(listener);
      // Resolves after Redis acknowledged the subscription: events published from then on arrive.
      // Subscribing again to a channel already subscribed is a no-op for Redis.
      try {
        await options.subscriber.subscribe(channel);
      } catch (error) {
        listeners.delete(listener);
        if (listeners.size === 0) {
          channels.delete(channel);
          // The SUBSCRIBE may have reached Redis even though the client gave up on the answer.
          options.subscriber.unsubscribe(channel).catch(() => undefined);
        }
        throw new ServiceError('STORE_UNAVAILABLE', 'Live updates are unavailable (Redis).', { cause: error });
      }
      return () => {
        const current = channels.get(channel);
        if (current === undefined || !current.delete(listener) || current.size > 0) return;
        channels.delete(channel);
        options.subscriber.unsubscribe(channel).catch((error: unknown) => log.warn({ err: error, channel }, 'unsubscribe failed'));
      };
    },

    listenerCount(correlationId) {
      if (correlationId !== undefined) return channels.get(`${prefix}${correlationId}`)?.size ?? 0;
      let total = 0;
      for (const set of channels.values()) total += set.size;
      return total;
    },

    async dispose() {
      options.subscriber.off('message', onMessage);
      channels.clear();
    },
  };
}
