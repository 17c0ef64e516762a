import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { createSilentLogger } from '../../src/logger.js';
import { createMemoryPubSub } from '../../src/pubsub/memory-pubsub.js';
import { createRedisPubSub } from '../../src/pubsub/redis-pubsub.js';
import { describePubSubContract } from './pubsub-contract.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const clients: Redis[] = [];
const connect = () => {
  const client = new Redis(REDIS_URL);
  clients.push(client);
  return client;
};
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit()));
});

describePubSubContract('memory', () => {
  const bus = createMemoryPubSub();
  return [bus, bus];
});

// Two replicas: each has its own publisher and subscriber connection.
describePubSubContract('redis', () => {
  const prefix = `rcs-test-${process.pid}`;
  const logger = createSilentLogger();
  return [
    createRedisPubSub({ publisher: connect(), subscriber: connect(), prefix, logger }),
    createRedisPubSub({ publisher: connect(), subscriber: connect(), prefix, logger }),
  ];
});
