/**
 * Consumes a pre-produced topic to its end and reports records/s, timed from the first batch handed
 * to the mode's code to the last record handled (the group join is not counted), and the same from
 * the start of the first fetch (`fromFirstFetch`: that fetch's decoding counted) and from the
 * arrival of its response (`fromFirstResponse`: its decoding counted, its wait not). Modes: `bare`
 * (kafkajs + JSON.parse only, the ceiling),
 * `bare-redis` (the same consumer writing each record to Redis with the least a store needs: one
 * `RPUSH` per record into its test's list, a chunk's pushes pipelined in one round trip: the
 * ceiling for the Redis modes), `memory`, `redis` and `redis-cluster` (the service's consumer, decoder and result log; Redis
 * through the service's own connection factory, on the machine's Redis or on the Redis Cluster the
 * environment names: REDIS_MODE=cluster, REDIS_CLUSTER_NODES), `peer-memory` and
 * `peer-redis` (the common-stack peer's `eachMessage` loop, store and PubSub, nobody subscribed).
 * For the Redis modes (`bare-redis` included) it also reports the Redis commands per record, from the data nodes'
 * `total_commands_processed` (BENCH_REDIS_NODES: host:port of each primary) before and after; for the
 * service's modes, the records per call into its state.
 * Usage: ingest.ts <mode> <brokers> <topic> <records>
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { CHUNK } from '../../src/ingest/kafka-batch-processor.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultRecorder } from '../../src/results/record-result.js';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { createRedisResultLog } from '../../src/log/redis-result-log.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { loadConfig } from '../../src/config/config.js';
import { createRedisConnection } from '../../src/redis/redis-from-config.js';
import { RedisPubSub } from 'graphql-redis-subscriptions';
import { PubSub } from 'graphql-subscriptions';
import { startPeerConsumer } from '../peers/common-stack/consumer.js';
import { createRedisStore } from '../peers/common-stack/redis-store.js';
import { createMemoryStore } from '../peers/common-stack/store.js';

/** Records per round trip of `bare-redis`: the service's chunk, unless BENCH_INGEST_CHUNK says otherwise. */
const BARE_CHUNK = Number(process.env.BENCH_INGEST_CHUNK ?? CHUNK);

const [mode = 'bare', brokers = '', topic = '', countArg = '0'] = process.argv.slice(2);
const total = Number(countArg);

let first: bigint | undefined;
/** The process's CPU time when the first batch arrived: what consuming cost, apart from the join. */
let cpuAtFirst: NodeJS.CpuUsage | undefined;
/**
 * Starts the clock when kafkajs hands the first batch to the mode's code, whatever the mode does
 * with it: the clock once started at the first record counted, which every mode counts only once
 * it has handled its first unit (the bare consumer a whole batch, the service a chunk, the peer a
 * record), so the first unit's records were counted and its time was not, more for the larger unit.
 */
const startClock = () => {
  if (first !== undefined) return;
  first = process.hrtime.bigint();
  cpuAtFirst = process.cpuUsage();
};
/**
 * A second clock, started when kafkajs starts its first fetch (after the join; the fetch's offset
 * resolution included): the first clock leaves out that fetch's receiving and decoding, which
 * kafkajs does for the whole response before it hands over the first batch, and that work differs
 * between the modes (the service replaces kafkajs's record decoder; the ceilings and the peer do
 * not). bench/README.md, "Ingest on two clocks", says how much it is.
 */
let firstFetch: { at: bigint; cpu: NodeJS.CpuUsage } | undefined;
const startFetchClock = () => {
  firstFetch ??= { at: process.hrtime.bigint(), cpu: process.cpuUsage() };
};
/**
 * A third clock, started when the first fetch's response has arrived, before kafkajs decodes it
 * (its `consumer.network.request` event is emitted as the response is handed over; the decoding
 * follows on a later microtask): every record's receiving, decoding and handling is inside it, and
 * neither the join nor the fetch's offset resolution and broker wait, which the fetch clock counts.
 */
let firstResponse: { at: bigint; cpu: NodeJS.CpuUsage } | undefined;
const startResponseClock = ({ payload }: { payload: { apiName: string } }) => {
  if (payload.apiName === 'Fetch') firstResponse ??= { at: process.hrtime.bigint(), cpu: process.cpuUsage() };
};
const client = new Kafka({ clientId: `bench-${mode}`, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
// Every mode's consumer, the service's and the peer's made inside them, starts the clocks alike.
const kafka = Object.create(client) as Kafka;
kafka.consumer = (config) => {
  const consumer = client.consumer(config);
  consumer.on(consumer.events.FETCH_START, startFetchClock);
  consumer.on(consumer.events.REQUEST, startResponseClock);
  consumer.on(consumer.events.START_BATCH_PROCESS, startClock);
  return consumer;
};
const group = `bench-${mode}-${process.pid}`;

let seen = 0;
/** The service's calls into its state (records per call: how finely its lanes hand them over). */
let calls = 0;
let finish!: () => void;
const finished = new Promise<void>((resolve) => (finish = resolve));
const tick = (n: number) => {
  startClock();
  seen += n;
  if (seen >= total) finish();
};

let stop: () => Promise<void>;
let redis: RedisClient | undefined;
let subscriber: RedisClient | undefined;
/** Commands processed by the data nodes so far (the Redis modes of the service). */
const commandsProcessed = async (): Promise<number> => {
  let sum = 0;
  for (const address of (process.env.BENCH_REDIS_NODES ?? '127.0.0.1:6379').split(',')) {
    const [host, port] = address.split(':');
    const node = new Redis(Number(port), host as string);
    sum += Number(/total_commands_processed:(\d+)/.exec(await node.info('stats'))?.[1]);
    node.disconnect();
  }
  return sum;
};
let commandsBefore: number | undefined;
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
} else if (mode === 'bare-redis') {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const client = redis;
  await new Promise((resolve) => client.once('ready', resolve));
  commandsBefore = await commandsProcessed();
  const prefix = `bench-${process.pid}`;
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      // Chunks as large as the service's, one round trip each.
      for (let from = 0; from < batch.messages.length; from += BARE_CHUNK) {
        const chunk = batch.messages.slice(from, from + BARE_CHUNK);
        const pipeline = client.pipeline();
        for (const m of chunk) {
          const text = String(m.value);
          const { correlationId } = JSON.parse(text) as { correlationId: string };
          pipeline.rpush(`${prefix}:{${correlationId}}:msgs`, text);
        }
        for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
        tick(chunk.length);
      }
    },
  });
  stop = () => consumer.disconnect();
} else if (mode === 'peer-memory' || mode === 'peer-redis') {
  // The peer as its server wires it (`peers/common-stack/server.ts`), without the HTTP side.
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  redis = mode === 'peer-redis' ? new Redis(url) : undefined;
  const pubsub = redis ? new RedisPubSub({ connection: url }) : new PubSub();
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
  // The Redis connections as the service opens them: commands, and a subscriber.
  if (mode === 'redis' || mode === 'redis-cluster') {
    const config = loadConfig({
      STATE_STORE: 'redis',
      REDIS_URL: process.env.REDIS_URL,
      REDIS_MODE: process.env.REDIS_MODE,
      REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES,
    }).redis;
    redis = createRedisConnection(config, createSilentLogger(), 'commands');
    subscriber = createRedisConnection(config, createSilentLogger(), 'subscriber', { subscriber: true });
    await Promise.all([redis, subscriber].map((c) => new Promise((resolve) => c.once('ready', resolve))));
    commandsBefore = await commandsProcessed();
  }
  const log =
    redis && subscriber
      ? createRedisResultLog({
          redis,
          subscriber,
          ttlSeconds: 600,
          maxMessagesPerTest: 1_000_000,
          prefix: `bench-${process.pid}`,
          logger: createSilentLogger(),
        })
      : createMemoryResultLog({ ttlSeconds: 600, maxTests: 100_000, maxMessagesPerTest: 1_000_000 });
  const record = createResultRecorder({ log });
  // Loaded here, for the service's modes alone: its consumer replaces kafkajs's record decoder
  // (src/ingest/kafkajs-record-decoder.ts), which the ceilings and the peer run without (they keep
  // the workarounds every mode has: the queue timer, the stopped fetch, the record bounds).
  const { createKafkaResultConsumer } = await import('../../src/ingest/kafka-result-consumer.js');
  const consumer = createKafkaResultConsumer({
    kafka,
    groupId: group,
    topic,
    fromBeginning: true,
    fetchMaxWaitMs: 100,
    logger: createSilentLogger(),
    onEvents: async (messages) => {
      calls += 1;
      const outcomes = await record(messages);
      tick(messages.length);
      return outcomes;
    },
  });
  consumer.start();
  stop = () => consumer.dispose();
}

await finished;
const end = process.hrtime.bigint();
const seconds = Number(end - (first as bigint)) / 1e9;
const cpu = process.cpuUsage(cpuAtFirst);
// CPU per record (user and system, µs) and the share of the wall time the process was on a core: a
// rate below the ceiling's with the core not full is time spent waiting (fetches), not working.
const cpuPerRecordUs = (cpu.user + cpu.system) / seen;
const busy = (cpu.user + cpu.system) / 1e6 / seconds;
// The same on the clock from the first fetch.
const fromClock = (start: { at: bigint; cpu: NodeJS.CpuUsage } | undefined) => {
  if (start === undefined) return undefined;
  const used = process.cpuUsage(start.cpu);
  return { rate: seen / (Number(end - start.at) / 1e9), cpuPerRecordUs: (used.user + used.system) / seen };
};
const fromFirstFetch = fromClock(firstFetch);
const fromFirstResponse = fromClock(firstResponse);
await stop();
// The INFO calls of the count itself (one per node, twice) are left out.
const commandsPerRecord = commandsBefore === undefined ? undefined : ((await commandsProcessed()) - commandsBefore) / seen;
if (redis && !redis.isCluster) {
  const keys = await redis.keys(`bench-${process.pid}:*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
}
await redis?.quit();
await subscriber?.quit();
console.log(
  JSON.stringify({
    mode,
    records: seen,
    seconds,
    rate: seen / seconds,
    cpuPerRecordUs,
    busy,
    commandsPerRecord,
    fromFirstFetch,
    fromFirstResponse,
    ...(calls === 0 ? {} : { recordsPerCall: seen / calls }),
  }),
);
process.exit(0);
