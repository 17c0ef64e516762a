/**
 * Builds the state side of a process from its configuration: the store and the PubSub, in memory
 * or in Redis, with the Redis connections they need (owned and closed here).
 */
import { Redis } from 'ioredis';
import type { StoreConfig } from './config.js';
import type { Logger } from './logger.js';
import { createMemoryPubSub } from './pubsub/memory-pubsub.js';
import type { PubSub } from './pubsub/pubsub.js';
import { createRedisPubSub, eventChannelPrefix } from './pubsub/redis-pubsub.js';
import { createMemoryStore } from './store/memory-store.js';
import { createRedisStore } from './store/redis-store.js';
import type { Store } from './store/store.js';

/** The store and PubSub of one process. */
export interface State {
  readonly store: Store;
  readonly pubsub: PubSub;
  /** Tests held in this process, when the state is held here (memory modes). */
  readonly storedTests?: () => number;
  /** Closes the connections (after the service has stopped using them). Safe to call twice. */
  dispose(): Promise<void>;
}

/** Creates the configured state. Redis connections are opened in the background. */
export function createState(config: StoreConfig, logger: Logger): State {
  if (config.kind === 'memory' || config.kind === 'replicated') {
    const store = createMemoryStore(config);
    return { store, pubsub: createMemoryPubSub(), storedTests: () => store.size, dispose: async () => {} };
  }
  const log = logger.child({ component: 'redis' });
  // No offline queue: while Redis is down, commands fail at once (503 for reads, the consumer
  // stops committing) instead of piling up in memory.
  const connect = (role: string) => {
    // A command timeout too: a Redis that hangs (rather than refusing) must not hang requests.
    const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2000, connectionName: `rcs-${role}` });
    client.on('error', (error: Error) => log.warn({ role, err: error.message }, 'redis connection error'));
    return client;
  };
  const commands = connect('commands');
  // ioredis re-subscribes its channels by itself after a reconnect.
  const subscriber = connect('subscriber');

  let disposing: Promise<void> | undefined;
  return {
    store: createRedisStore({
      redis: commands,
      ttlSeconds: config.ttlSeconds,
      maxMessagesPerTest: config.maxMessagesPerTest,
      prefix: config.redisKeyPrefix,
      // The store announces what it stores on the PubSub's channels, in the same atomic step.
      publishPrefix: eventChannelPrefix(config.redisKeyPrefix),
    }),
    pubsub: createRedisPubSub({ publisher: commands, subscriber, prefix: config.redisKeyPrefix, logger }),
    dispose() {
      disposing ??= Promise.allSettled([commands.quit(), subscriber.quit()]).then(() => undefined);
      return disposing;
    },
  };
}
