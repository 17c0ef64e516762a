/**
 * The change feed of the Redis log in one process. The append and create scripts publish every
 * change on one channel for the whole log (message-format.ts); a replica listens to it on its
 * subscriber connection while it has subscribers of its own, and hands each change to those that
 * may see the test. One channel rather than one per owner: a subscriber with the admin scope sees
 * every test, and a replica filters by owner as cheaply as Redis would.
 *
 * Changes published while the subscriber connection is down are lost (the feed replays nothing);
 * a dashboard that resubscribes rereads the list.
 */
import type { Redis } from 'ioredis';
import type { TestChangeEvent } from '../domain/types.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createChangeFeed } from './change-feed.js';
import { decodeChange } from './message-format.js';
import type { ChangeOptions } from './result-log.js';

/** The change feed of one process over Redis. */
export interface RedisChanges {
  open(options: ChangeOptions): Promise<AsyncIterableIterator<TestChangeEvent>>;
  /** Subscribers open in this process. */
  count(): number;
  dispose(): void;
}

/** Creates the feed; `channel` is where the scripts publish. */
export function createRedisChanges(options: { readonly subscriber: Redis; readonly channel: string; readonly logger: Logger }): RedisChanges {
  const { subscriber, channel } = options;
  const log = options.logger.child({ component: 'redis-changes' });
  let subscribed: Promise<unknown> | undefined;
  const feed = createChangeFeed(() => {
    // No subscriber left here: stop receiving every change of the log.
    subscribed = undefined;
    subscriber.unsubscribe(channel).catch((error: unknown) => log.warn({ err: error }, 'unsubscribe failed'));
  });

  const onMessage = (from: string, text: string) => {
    if (from !== channel || feed.count() === 0) return;
    const published = decodeChange(text);
    if (published === null) log.warn('a change that is not one was published on the change channel');
    else feed.emit(published.change, published.before);
  };
  subscriber.on('message', onMessage);

  return {
    async open(changeOptions) {
      for (;;) {
        const pending = (subscribed ??= subscriber.subscribe(channel));
        try {
          await pending;
        } catch (error) {
          if (subscribed === pending) subscribed = undefined;
          throw new ServiceError('STORE_UNAVAILABLE', 'Live updates are unavailable (Redis).', { cause: error });
        }
        // The last subscriber may have left (and unsubscribed) while this one waited: subscribe again.
        if (subscribed === pending) return feed.open(changeOptions);
      }
    },
    count: () => feed.count(),
    dispose() {
      subscriber.off('message', onMessage);
      feed.clear();
    },
  };
}
