/**
 * Rebalance time on real Kafka: how long records wait while a second replica joins the consumer
 * group, leaves it gracefully (SIGTERM) or is killed (SIGKILL), with records produced at a steady
 * rate throughout. Both replicas share Redis, and one subscriber per test on the replica that stays
 * up receives every push, so the longest wait of any record (push time minus the time it was
 * handed to the producer) is the pause the group caused. Each scenario runs on a fresh topic and
 * group of a one-node Kafka started here, with the service's default consumer settings.
 */
import { Redis } from 'ioredis';
import { startKafka, type KafkaCluster } from '../tools/kafka/kafka-cluster.js';
import type { Row } from './ingest.js';
import { runWorker, startWorker } from './lib/worker.js';
import { BENCH_AUTH_ENV, benchToken } from './lib/token.js';
import { untilConsuming } from './lib/consuming.js';

type Event = 'join' | 'leave' | 'kill';

interface Outcome {
  readonly maxWaitMs: number;
  readonly p99Ms: number;
  readonly lost: number;
}

const TESTS = 60;
const RATE = 200;
/** When the event happens, after production began. */
const EVENT_AT_MS = 4000;

/** The first line of a server worker, or the reason it exited without one. */
function started(worker: ReturnType<typeof startWorker>): Promise<{ url: string; ids: string[] }> {
  const exited = worker.result.then(() => Promise.reject(new Error('worker exited before listening')));
  return Promise.race([worker.ready, exited]) as Promise<{ url: string; ids: string[] }>;
}

async function scenario(cluster: KafkaCluster, event: Event, seconds: number): Promise<Outcome> {
  const tag = `${event}-${Date.now()}`;
  const topic = `bench-rebalance-${tag}`;
  await cluster.createTopic(topic, 12);
  const env = {
    ...BENCH_AUTH_ENV,
    KAFKA_BROKERS: cluster.bootstrapServers.join(','),
    KAFKA_RESULTS_TOPIC: topic,
    KAFKA_GROUP_ID: `bench-rebalance-${tag}`,
    STATE_STORE: 'redis',
    REDIS_KEY_PREFIX: `bench-rebalance-${tag}`,
    SUBSCRIPTION_QUEUE_LIMIT: '100000',
  };
  const stayer = startWorker('service', ['--tests', String(TESTS), '--messages', '0'], env);
  let mover: ReturnType<typeof startWorker> | undefined;
  const startMover = async () => {
    mover = startWorker('service', [], env);
    await untilConsuming((await started(mover)).url, 60_000);
  };
  try {
    const { url, ids } = await started(stayer);
    await untilConsuming(url, 60_000);
    if (event !== 'join') await startMover();
    // Let the group settle: the stayer rejoins after the mover's join.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const records = RATE * seconds;
    const subscribers = startWorker('subscribers', [url, await benchToken(), '1', String(records), ...ids], {
      SUBSCRIBERS_TIMEOUT_MS: String(seconds * 1000 + 60_000),
    });
    await subscribers.ready;
    const producing = runWorker('produce', [cluster.bootstrapServers.join(','), topic, String(RATE), String(seconds), ...ids]);
    await new Promise((resolve) => setTimeout(resolve, EVENT_AT_MS));
    if (event === 'join') await startMover();
    else if (event === 'leave') await mover?.stop();
    else mover?.child.kill('SIGKILL');
    await producing;
    const result = (await subscribers.result) as { received: number; expected: number; p99: number; max: number };
    console.error(`rebalance ${event}: ${result.received}/${result.expected} received, longest wait ${result.max} ms`);
    return { maxWaitMs: result.max, p99Ms: result.p99, lost: result.expected - result.received };
  } finally {
    await Promise.all([stayer.stop(), mover?.stop()]);
    await removeKeys(env.REDIS_KEY_PREFIX);
  }
}

async function removeKeys(prefix: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
  } finally {
    redis.disconnect();
  }
}

/** Runs join, graceful leave and kill on a one-node Kafka; `smoke` skips the kill (it lasts a session timeout). */
export async function benchRebalance(smoke: boolean): Promise<Row[]> {
  const cluster = await startKafka({ nodes: 1 });
  const rows: Row[] = [];
  try {
    const events: Array<[Event, string, number]> = [
      ['join', 'a second replica joins', 15],
      ['leave', 'the second replica leaves (SIGTERM)', 15],
      ...(smoke ? [] : [['kill', 'the second replica is killed (SIGKILL)', 50] as [Event, string, number]]),
    ];
    for (const [event, label, seconds] of events) {
      const r = await scenario(cluster, event, seconds);
      const variant = `${label}, 12 partitions, ${RATE} records/s, Kafka ${cluster.version}`;
      rows.push(
        {
          benchmark: 'rebalance',
          variant: `${variant}: longest wait of a record`,
          value: r.maxWaitMs,
          unit: 'ms',
          ...(event === 'kill' ? {} : { target: '≤ 5 s', met: r.maxWaitMs <= 5000 && r.lost === 0 }),
        },
        { benchmark: 'rebalance', variant: `${variant}: lost`, value: r.lost, unit: 'messages', target: '0', met: r.lost === 0 },
      );
    }
  } finally {
    await cluster.stop();
  }
  return rows;
}
