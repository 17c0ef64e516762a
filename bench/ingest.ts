/**
 * BrokerSide: the same pre-produced topic consumed by a bare kafkajs consumer (the ceiling), by the
 * same bare consumer writing one pipelined `RPUSH` per record to Redis (the ceiling of the Redis
 * rows), by the service's consumer into the memory store, and into the Redis store, and by the common-stack peer
 * (`peers/common-stack/`) into its Map and into Redis, one after the other.
 */
import type { BenchBroker, BrokerKind } from './lib/broker.js';
import { produceIngestTopic } from './lib/ingest-topic.js';
import { median } from './lib/median.js';
import { runWorker } from './lib/worker.js';
import { startRedisCluster } from '../tools/redis/redis-cluster.js';

/** One row of the results table. */
export interface Row {
  readonly benchmark: string;
  readonly variant: string;
  readonly value: number;
  readonly unit: string;
  /** The ceiling's value for the same benchmark, when it has one. */
  readonly ratio?: number;
  /** The service's value over the common-stack peer's in the same run, as `ratio` is over the ceiling's. */
  readonly ratioToPeer?: number;
  readonly target?: string;
  readonly met?: boolean;
  /** The broker the row was measured on; absent where the broker is not on the measured path. */
  readonly broker?: BrokerKind;
}

/** Runs the ingest comparison over `records` records in 12 partitions, the median of `rounds` runs each. */
export async function benchIngest(cluster: BenchBroker, records: number, rounds = 1): Promise<Row[]> {
  const topic = await produceIngestTopic(cluster, 'bench-ingest', 12, records);

  const brokers = cluster.bootstrapServers.join(',');
  type Result = { rate: number; commandsPerRecord?: number; fromFirstResponse?: { rate: number } };
  // A Redis Cluster of 3 primaries (no replicas: on this machine their copying would be measured
  // too) for the cluster row, through the service's own connection factory.
  const redisCluster = await startRedisCluster({ replicasPerPrimary: 0 });
  const clusterEnv = { REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: redisCluster.seeds.join(','), BENCH_REDIS_NODES: redisCluster.seeds.join(',') };
  const commands: Record<'bare-redis' | 'redis' | 'redis-cluster', number[]> = { 'bare-redis': [], redis: [], 'redis-cluster': [] };
  // A run lasts well under a second, so one run says little on a shared machine: the three are
  // run in turn `rounds` times and each reports its median.
  const modes = ['bare', 'bare-redis', 'memory', 'redis', 'redis-cluster', 'peer-memory', 'peer-redis'] as const;
  const rates = Object.fromEntries(modes.map((mode) => [mode, [] as number[]])) as Record<(typeof modes)[number], number[]>;
  // The memory row's three modes on the worker's third clock too, from the first fetch's response
  // (before kafkajs decodes it): the first clock starts at the first batch handed over, after that
  // fetch was received and decoded (half of a 100,000-record run on Kafka), and the two decoders
  // differ, so it leaves out more of the bare consumer's work than of the service's (bench/README.md,
  // "Ingest on two clocks" and "The memory row judged on the clock from the first response").
  const responseRates: Record<'bare' | 'memory' | 'peer-memory', number[]> = { bare: [], memory: [], 'peer-memory': [] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of modes) {
        const result = await runWorker<Result>('ingest', [mode, brokers, topic, String(records)], mode === 'redis-cluster' ? clusterEnv : {});
        rates[mode].push(result.rate);
        if ((mode === 'bare' || mode === 'memory' || mode === 'peer-memory') && result.fromFirstResponse !== undefined)
          responseRates[mode].push(result.fromFirstResponse.rate);
        if ((mode === 'bare-redis' || mode === 'redis' || mode === 'redis-cluster') && result.commandsPerRecord !== undefined)
          commands[mode].push(result.commandsPerRecord);
      }
    }
  } finally {
    await redisCluster.stop();
  }
  const bare = { rate: median(rates.bare) };
  const memory = { rate: median(rates.memory) };
  const redis = { rate: median(rates.redis) };
  const onCluster = median(rates['redis-cluster']);
  const bareRedis = median(rates['bare-redis']);
  const perRecord = (mode: 'bare-redis' | 'redis' | 'redis-cluster') => (commands[mode].length === 0 ? 'n/a' : median(commands[mode]).toFixed(2));
  const peerMemory = median(rates['peer-memory']);
  const peerRedis = median(rates['peer-redis']);
  const onResponseClock = (mode: keyof typeof responseRates) => (responseRates[mode].length === rounds ? median(responseRates[mode]) : Number.NaN);
  const [bareFromResponse, memoryFromResponse, peerFromResponse] = [onResponseClock('bare'), onResponseClock('memory'), onResponseClock('peer-memory')];
  console.error(`ingest rates (records/s): ${JSON.stringify(rates)}; from the first fetch's response: ${JSON.stringify(responseRates)}`);
  return [
    { benchmark: 'ingest', variant: `bare kafkajs consumer (JSON.parse only), median of ${rounds}`, value: bare.rate, unit: 'records/s' },
    // Judged on the clock from the first fetch's response, which counts every record's receiving,
    // decoding and handling in both modes; the first clock's row is printed beside it, unjudged.
    {
      benchmark: 'ingest',
      variant: "service → memory store, on the clock from the first batch (leaves out the first fetch's decoding)",
      value: memory.rate,
      unit: 'records/s',
      ratio: memory.rate / bare.rate,
      ratioToPeer: memory.rate / peerMemory,
    },
    // A run whose worker reported no such clock reads NaN here, "no value", and not met.
    {
      benchmark: 'ingest',
      variant: "service → memory store, on the clock from the first fetch's response",
      value: memoryFromResponse,
      unit: 'records/s',
      ratio: memoryFromResponse / bareFromResponse,
      ratioToPeer: memoryFromResponse / peerFromResponse,
      target: '≥ 0.8× and above the peer',
      met: memoryFromResponse / bareFromResponse >= 0.8 && memoryFromResponse > peerFromResponse,
    },
    { benchmark: 'ingest', variant: 'common-stack peer (eachMessage) → Map + PubSub', value: peerMemory, unit: 'records/s', ratio: peerMemory / bare.rate },
    {
      benchmark: 'ingest',
      variant: `bare kafkajs consumer → Redis (one pipelined RPUSH per record, one round trip per chunk; ${perRecord('bare-redis')} Redis commands per record), median of ${rounds}`,
      value: bareRedis,
      unit: 'records/s',
      ratio: bareRedis / bare.rate,
    },
    // Two ceilings: the one that includes Redis (`ratio`), and the bare consumer (in the variant).
    {
      benchmark: 'ingest',
      variant: `service → Redis store (one node; ${perRecord('redis')} Redis commands per record; ratio to the Redis ceiling, ${(redis.rate / bare.rate).toFixed(2)}× the bare consumer)`,
      value: redis.rate,
      unit: 'records/s',
      ratio: redis.rate / bareRedis,
      ratioToPeer: redis.rate / peerRedis,
      target: '≥ 1.0×',
      met: redis.rate / bareRedis >= 1.0,
    },
    // On one machine the cluster's three primaries share its cores with the service: the row shows
    // the overhead of the per-test script calls and the sharded notices, not a speed-up.
    {
      benchmark: 'ingest',
      variant: `service → Redis Cluster (3 primaries; ${perRecord('redis-cluster')} Redis commands per record; ratio to the one-node row ${(onCluster / redis.rate).toFixed(2)}×)`,
      value: onCluster,
      unit: 'records/s',
      ratio: onCluster / bare.rate,
    },
    {
      benchmark: 'ingest',
      variant: 'common-stack peer (eachMessage) → Redis hash/list + RedisPubSub',
      value: peerRedis,
      unit: 'records/s',
      ratio: peerRedis / bare.rate,
    },
  ];
}
