/**
 * Consumes a pre-produced topic to its end and reports records/s, timed from the first record to
 * the last (the group join is not counted). Modes: `bare` (kafkajs + JSON.parse only, the ceiling),
 * `memory` and `redis` (the service's consumer, decoder and store).
 * Usage: ingest.ts <mode> <brokers> <topic> <records>
 */
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaResultConsumer } from '../../src/ingest/kafka-result-consumer.js';
import { createSilentLogger } from '../../src/logger.js';
import { createMemoryPubSub } from '../../src/pubsub/memory-pubsub.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';

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
} else {
  redis = mode === 'redis' ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
  const store = redis
    ? createRedisStore({ redis, ttlSeconds: 600, maxMessagesPerTest: 1_000_000, prefix: `bench-${process.pid}` })
    : createMemoryStore({ ttlSeconds: 600, maxTests: 100_000, maxMessagesPerTest: 1_000_000 });
  const record = createResultRecorder({ store, pubsub: createMemoryPubSub() });
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
}
console.log(JSON.stringify({ mode, records: seen, seconds, rate: seen / seconds }));
process.exit(0);
