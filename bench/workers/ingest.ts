/**
 * Consumes a pre-produced topic to its end and reports records/s, timed from the first record to
 * the last (the group join is not counted). Modes: `bare` (kafkajs + JSON.parse only, the ceiling),
 * `memory` and `redis` (the service's consumer, decoder and result log), `peer-memory` and
 * `peer-redis` (the common-stack peer's `eachMessage` loop, store and PubSub, nobody subscribed).
 * Usage: ingest.ts <mode> <brokers> <topic> <records>
 */
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaResultConsumer } from '../../src/ingest/kafka-result-consumer.js';
import { createSilentLogger } from '../../src/logger.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import { RedisPubSub } from 'graphql-redis-subscriptions';
import { PubSub } from 'graphql-subscriptions';
import { startPeerConsumer } from '../peers/common-stack/consumer.js';
import { createRedisStore } from '../peers/common-stack/redis-store.js';
import { createMemoryStore } from '../peers/common-stack/store.js';

const [mode = 'bare', brokers = '', topic = '', countArg = '0'] = process.argv.slice(2);
const total = Number(countArg);
const kafka = new Kafka({ clientId: `bench-${mode}`, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const group = `bench-${mode}-${process.pid}`;

let first: bigint | undefined;
let seen = 0;
let finish!: () => void;
const finished = new Promise<void>((resolve) => (finish = resolve));
const tick = (n: number) => {
  first ??= process.hrtime.bigint();
  seen += n;
  if (seen >= total) finish();
};

let stop: () => Promise<void>;
let redis: Redis | undefined;
let subscriber: Redis | undefined;
if (mode === 'bare') {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) JSON.parse(String(m.value));
      tick(batch.messages.length);
    },
  });
  stop = () => consumer.disconnect();
} else if (mode === 'peer-memory' || mode === 'peer-redis') {
  // The peer as its server wires it (`peers/common-stack/server.ts`), without the HTTP side.
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  redis = mode === 'peer-redis' ? new Redis(url) : undefined;
  const pubsub = redis ? new RedisPubSub({ publisher: new Redis(url), subscriber: new Redis(url) }) : new PubSub();
  const consumer = await startPeerConsumer({
    kafka,
    groupId: group,
    topic,
    fromBeginning: true,
    fetchMaxWaitMs: 100,
    store: redis ? createRedisStore(redis, `bench-${process.pid}`) : createMemoryStore(),
    pubsub,
    trigger: `bench-${process.pid}:RESULT_STORED`,
    onRecord: () => tick(1),
  });
  stop = async () => {
    await consumer.disconnect();
    if (pubsub instanceof RedisPubSub) await pubsub.close();
  };
} else {
  // The Redis connections as src/state.ts opens them: commands, and a subscriber.
  redis = mode === 'redis' ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
  subscriber = mode === 'redis' ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
  const log =
    redis && subscriber
      ? createRedisResultLog({ redis, subscriber, ttlSeconds: 600, maxMessagesPerTest: 1_000_000, prefix: `bench-${process.pid}`, logger: createSilentLogger() })
      : createMemoryResultLog({ ttlSeconds: 600, maxTests: 100_000, maxMessagesPerTest: 1_000_000 });
  const record = createResultRecorder({ log });
  const consumer = createKafkaResultConsumer({
    kafka,
    groupId: group,
    topic,
    fromBeginning: true,
    fetchMaxWaitMs: 100,
    logger: createSilentLogger(),
    onEvents: async (messages) => {
      const outcomes = await record(messages);
      tick(messages.length);
      return outcomes;
    },
  });
  consumer.start();
  stop = () => consumer.dispose();
}

await finished;
const seconds = Number(process.hrtime.bigint() - (first as bigint)) / 1e9;
await stop();
if (redis) {
  const keys = await redis.keys(`bench-${process.pid}:*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  await redis.quit();
  await subscriber?.quit();
}
console.log(JSON.stringify({ mode, records: seen, seconds, rate: seen / seconds }));
process.exit(0);
