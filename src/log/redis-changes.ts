/**
 * The change feed of the Redis log in one process. The append and create scripts publish every
 * change on the log's change channel (message-format.ts): one channel on a single node or
 * Sentinel, one per slot tag on a Cluster, where a message is published on its test's shard
 * (redis-channels.ts). A replica listens to them on its subscriber connection while it has
 * subscribers of its own, and hands each change to those that may see the test. Channels by slot
 * rather than by owner: a subscriber with the admin scope sees every test, and a replica filters by
 * owner as cheaply as Redis would.
 *
 * Changes published while the subscriber connection is down are lost (the feed replays nothing);
 * a dashboard that resubscribes rereads the list.
 */
import type { TestChangeEvent } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { createChangeFeed } from './change-feed.js';
import { decodeChange } from './message-format.js';
import type { RedisPubSub } from './redis-pubsub.js';
import type { ChangeDelivery, ChangeOptions } from './result-log.js';

/** The change feed of one process over Redis. */
export interface RedisChanges {
  open(options: ChangeOptions): Promise<AsyncIterableIterator<TestChangeEvent>>;
  /** A watcher of the service's own (change-feed.ts); resolves with its stop once the channels are subscribed. */
  watch(listener: (correlationId: string) => void): Promise<() => void>;
  /** Tells this process's watchers alone that `correlationId` changed (a test removed here, which no notice announces). */
  touched(correlationId: string): void;
  /** Subscribers and watchers open in this process. */
  count(): number;
  /** Subscribers open in this process (clients'; watchers left out). */
  clients(): number;
  /** Whether notices reach this process now (result-log.ts). */
  delivery(): ChangeDelivery;
  dispose(): void;
}

/**
 * Creates the feed; `channels` are where the scripts publish (one on a single node, one per slot
 * on Redis Cluster: redis-channels.ts).
 */
export function createRedisChanges(options: {
  readonly pubsub: RedisPubSub;
  readonly channels: () => readonly string[];
  readonly logger: Logger;
}): RedisChanges {
  const { pubsub } = options;
  let channels: ReadonlySet<string> | undefined;
  const channelsOf = () => (channels ??= new Set(options.channels()));
  const log = options.logger.child({ component: 'redis-changes' });
  let subscribed: Promise<unknown> | undefined;
  const feed = createChangeFeed(() => {
    // No subscriber left here: stop receiving every change of the log.
    subscribed = undefined;
    pubsub.unsubscribe([...channelsOf()]).catch((error: unknown) => log.warn({ err: error }, 'unsubscribe failed'));
  });

  const onMessage = (from: string, text: string) => {
    if (feed.count() === 0 || !channelsOf().has(from)) return;
    const published = decodeChange(text);
    if (published === null) log.warn('a change that is not one was published on the change channel');
    else feed.emit(published.change, published.before);
  };
  const stopMessages = pubsub.onMessage(onMessage);
  let delivery: ChangeDelivery = { live: true, epoch: 0 };
  const stopLost = pubsub.onLost(() => {
    delivery = { live: false, epoch: delivery.epoch + 1 };
  });
  const stopBack = pubsub.onResubscribed(() => {
    delivery = { live: true, epoch: delivery.epoch + 1 };
  });

  /** Subscribes to the channels (once for every subscriber and watcher here), then adds one with `add`. */
  async function joined<T>(add: () => T): Promise<T> {
    for (;;) {
      const pending = (subscribed ??= pubsub.subscribe([...channelsOf()]));
      try {
        await pending;
      } catch (error) {
        if (subscribed === pending) subscribed = undefined;
        throw new ServiceError('STORE_UNAVAILABLE', 'Live updates are unavailable (Redis).', { cause: error });
      }
      // The last subscriber may have left (and unsubscribed) while this one waited: subscribe again.
      if (subscribed === pending) return add();
    }
  }

  return {
    open: (changeOptions) => joined(() => feed.open(changeOptions)),
    watch: (listener) => joined(() => feed.watch(listener)),
    touched: (correlationId) => feed.touched(correlationId),
    count: () => feed.count(),
    clients: () => feed.clients(),
    delivery: () => delivery,
    dispose() {
      stopMessages();
      stopLost();
      stopBack();
      feed.clear();
    },
  };
}
