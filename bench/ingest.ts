/**
 * BrokerSide: the same pre-produced topic consumed by a bare kafkajs consumer (the ceiling), by the
 * service's consumer into the memory store, and into the Redis store, and by the common-stack peer
 * (`peers/common-stack/`) into its Map and into Redis, one after the other.
 */
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { BenchBroker, BrokerKind } from './lib/broker.js';
import { runWorker } from './lib/worker.js';

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
  const topic = `bench-ingest-${Date.now()}`;
  await cluster.createTopic(topic, 12);
  const kafka = new Kafka({ clientId: 'bench-producer', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  // ~170-byte values; 1,000 tests keyed by id, so each test's records stay in order in one partition.
  for (let sent = 0; sent < records; ) {
    const messages = [];
    for (let i = 0; i < 2000 && sent < records; i++, sent++) {
      const id = `bench-${String(sent % 1000).padStart(4, '0')}-0000-0000-000000000000`;
      messages.push({ key: id, value: JSON.stringify({ correlationId: id, sequence: Math.floor(sent / 1000), status: 'running', payload: { step: sent, progress: 0.5, note: 'x'.repeat(24) } }) });
    }
    await producer.send({ topic, messages });
  }
  await producer.disconnect();

  const brokers = cluster.bootstrapServers.join(',');
  type Result = { rate: number };
  // A run lasts well under a second, so one run says little on a shared machine: the three are
  // run in turn `rounds` times and each reports its median.
  const rates: Record<'bare' | 'memory' | 'redis' | 'peer-memory' | 'peer-redis', number[]> = { bare: [], memory: [], redis: [], 'peer-memory': [], 'peer-redis': [] };
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['bare', 'memory', 'redis', 'peer-memory', 'peer-redis'] as const) {
      rates[mode].push((await runWorker<Result>('ingest', [mode, brokers, topic, String(records)])).rate);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const bare = { rate: median(rates.bare) };
  const memory = { rate: median(rates.memory) };
  const redis = { rate: median(rates.redis) };
  const peerMemory = median(rates['peer-memory']);
  const peerRedis = median(rates['peer-redis']);
  console.error(`ingest rates (records/s): ${JSON.stringify(rates)}`);
  return [
    { benchmark: 'ingest', variant: `bare kafkajs consumer (JSON.parse only), median of ${rounds}`, value: bare.rate, unit: 'records/s' },
    { benchmark: 'ingest', variant: 'service → memory store', value: memory.rate, unit: 'records/s', ratio: memory.rate / bare.rate, ratioToPeer: memory.rate / peerMemory, target: '≥ 0.95×', met: memory.rate / bare.rate >= 0.95 },
    { benchmark: 'ingest', variant: 'common-stack peer (eachMessage) → Map + PubSub', value: peerMemory, unit: 'records/s', ratio: peerMemory / bare.rate },
    { benchmark: 'ingest', variant: 'service → Redis store', value: redis.rate, unit: 'records/s', ratio: redis.rate / bare.rate, ratioToPeer: redis.rate / peerRedis, target: '≥ 0.6×', met: redis.rate / bare.rate >= 0.6 },
    { benchmark: 'ingest', variant: 'common-stack peer (eachMessage) → Redis hash/list + RedisPubSub', value: peerRedis, unit: 'records/s', ratio: peerRedis / bare.rate },
  ];
}
