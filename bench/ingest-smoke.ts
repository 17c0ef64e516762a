/**
 * A first ingest figure: records/s consumed into the memory store by the service's consumer, next
 * to a bare kafkajs consumer that only JSON-parses the same topic, in the same run (ratios count,
 * absolute numbers depend on the machine). Usage: npx tsx bench/ingest-smoke.ts [records] [partitions]
 */
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { createKafkaResultConsumer } from '../src/ingest/kafka-result-consumer.js';
import { createSilentLogger } from '../src/logger.js';
import { createMemoryPubSub } from '../src/pubsub/memory-pubsub.js';
import { createResultRecorder } from '../src/results/record-result.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { startMockCluster } from '../tools/mock-cluster/mock-cluster.js';

const total = Number(process.argv[2] ?? 20_000);
const partitions = Number(process.argv[3] ?? 6);
const topic = 'bench-results';
const cluster = await startMockCluster({ brokers: 1, topics: [{ name: topic, partitions }] });
const kafka = new Kafka({ clientId: 'bench', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });

// ~170-byte values, 100 tests with total/100 messages each, keyed by test so order holds per test.
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();
for (let sent = 0; sent < total; ) {
  const batch = [];
  for (let i = 0; i < 1000 && sent < total; i++, sent++) {
    const id = `bench-${sent % 100}`;
    batch.push({ key: id, value: JSON.stringify({ correlationId: id, sequence: Math.floor(sent / 100), status: 'running', payload: { step: sent, note: 'x'.repeat(60) } }) });
  }
  await producer.send({ topic, messages: batch });
}
await producer.disconnect();

/** Records/s from the first record consumed to the last (the group join is not counted). */
async function timeIt(run: (tick: (n: number) => void) => Promise<() => Promise<void>>): Promise<number> {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let started: bigint | undefined;
  let seen = 0;
  const stop = await run((n) => {
    started ??= process.hrtime.bigint();
    seen += n;
    if (seen >= total) finish();
  });
  await finished;
  const seconds = Number(process.hrtime.bigint() - (started as bigint)) / 1e9;
  await stop();
  return total / seconds;
}

const bare = await timeIt(async (tick) => {
  const consumer = kafka.consumer({ groupId: 'bench-bare', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) JSON.parse(String(m.value));
      tick(batch.messages.length);
    },
  });
  return () => consumer.disconnect();
});

const store = createMemoryStore({ ttlSeconds: 3600, maxTests: 10_000, maxMessagesPerTest: 1_000_000 });
const service = await timeIt(async (tick) => {
  const record = createResultRecorder({ store, pubsub: createMemoryPubSub() });
  const consumer = createKafkaResultConsumer({
    kafka,
    groupId: 'bench-service',
    topic,
    fromBeginning: true,
    fetchMaxWaitMs: 100,
    logger: createSilentLogger(),
    onEvent: async (message) => {
      const outcome = await record(message);
      tick(1);
      return outcome;
    },
  });
  consumer.start();
  return () => consumer.dispose();
});

await cluster.stop();
const rows = [
  ['bare kafkajs (JSON.parse only)', bare],
  ['service consumer → memory store', service],
];
console.log(`ingest smoke: ${total} records, ${partitions} partitions (timed from the first record consumed)`);
for (const [name, rate] of rows) console.log(`${String(name).padEnd(34)} ${Math.round(rate as number).toString().padStart(8)} records/s`);
console.log(`ratio service/bare: ${(service / bare).toFixed(2)}`);
