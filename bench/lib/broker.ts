/**
 * The brokers the benchmarks run on: Apache Kafka itself (one KRaft node, tools/kafka/) and
 * librdkafka's mock cluster (tools/mock-cluster/), behind the little the benchmarks need of them.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import { accessSync, constants } from 'node:fs';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { startKafka } from '../../tools/kafka/kafka-cluster.js';
import { startMockCluster } from '../../tools/mock-cluster/mock-cluster.js';

/** Which broker a benchmark row was measured on. */
export type BrokerKind = 'kafka' | 'mock';

const KINDS: readonly BrokerKind[] = ['kafka', 'mock'];

/** A running broker. */
export interface BenchBroker {
  readonly kind: BrokerKind;
  readonly bootstrapServers: string[];
  createTopic(name: string, partitions: number): Promise<void>;
  /** Stops the broker (every Java process of it, for Kafka). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * The brokers named by `--broker=kafka,mock` (in that order of running), `fallback` without the
 * option. Throws on a name that is not a broker, or on an empty list.
 */
export function parseBrokerOption(argv: readonly string[], fallback: readonly BrokerKind[]): BrokerKind[] {
  const arg = argv.find((a) => a.startsWith('--broker='));
  if (arg === undefined) return [...fallback];
  const names = arg
    .slice('--broker='.length)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !KINDS.includes(n as BrokerKind));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--broker wants a comma-separated list of ${KINDS.join(', ')}; got ${JSON.stringify(arg.slice('--broker='.length))}`);
  }
  return [...new Set(names as BrokerKind[])];
}

/**
 * Starts a broker. The real one is a single node (what one service process talks to on a
 * developer's machine), with the service's default topics, which it does not create by itself,
 * and warmed up for `warmupSeconds` with produce requests (each fetched back) before it is measured.
 */
export async function startBroker(kind: BrokerKind, warmupSeconds = 0): Promise<BenchBroker> {
  const topics = [
    { name: 'test-results', partitions: 6 },
    { name: 'test-requests', partitions: 3 },
  ];
  if (kind === 'mock') {
    const mock = await startMockCluster({ brokers: 1, topics });
    return { kind, bootstrapServers: mock.bootstrapServers, createTopic: (name, partitions) => mock.createTopic(name, partitions), stop: () => mock.stop() };
  }
  const kafka = await startKafka({ nodes: 1, topics: [...topics, { name: 'bench-warmup', partitions: 6 }], parent: memoryFolder() });
  try {
    await warmUp(kafka.bootstrapServers, warmupSeconds);
  } catch (error) {
    await kafka.stop();
    throw error;
  }
  return { kind, bootstrapServers: kafka.bootstrapServers, createTopic: (name, partitions) => kafka.createTopic(name, partitions), stop: () => kafka.stop() };
}

/**
 * Where the real broker keeps its log: the machine's memory-backed folder (`/dev/shm`) when it has
 * a writable one, unless BENCH_KAFKA_ON_DISK=1. On the shared disk of a small machine the broker
 * held its answers to the producer for 80–475 ms in bursts after the heavy steps (first appends
 * to a fresh topic's partitions waiting behind the disk), which stopped the step searches of the
 * service and of the ceiling alike: that measured the disk, not the servers compared on it.
 */
function memoryFolder(): string | undefined {
  if (process.env.BENCH_KAFKA_ON_DISK === '1') return undefined;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return undefined;
  }
}

/**
 * A Java broker just started runs its request paths interpreted until the JIT compiler has seen
 * them often enough: the first seconds measured on it were several times slower than later ones.
 * Small produce requests, a few at a time for a set time, each consumed back, exercise the paths the
 * benchmarks use (the mock, native code, needs none of this).
 */
async function warmUp(brokers: string[], seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const kafka = new Kafka({ clientId: 'bench-warmup', brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId: 'bench-warmup', maxWaitTimeInMs: 100 });
  let sent = 0;
  let sending = true;
  let seen = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  try {
    await Promise.all([producer.connect(), consumer.connect()]);
    await consumer.subscribe({ topic: 'bench-warmup', fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        seen += batch.messages.length;
        if (!sending && seen >= sent) done();
      },
    });
    const send = (r: number) =>
      producer.send({
        topic: 'bench-warmup',
        messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${(r * 10 + i) % 60}`, value: JSON.stringify({ r, i, note: 'x'.repeat(100) }) })),
      });
    // A few in flight at once: the compiler counts calls, not seconds.
    const deadline = Date.now() + seconds * 1000;
    for (let r = 0; Date.now() < deadline; r += 8) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => send(r + i)));
      sent += 80;
    }
    sending = false;
    if (seen >= sent) done();
    const timeout = setTimeout(done, 60_000);
    await all;
    clearTimeout(timeout);
  } finally {
    await Promise.all([producer.disconnect(), consumer.disconnect()]);
  }
}
