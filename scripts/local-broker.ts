/**
 * The Kafka the local stack runs on: librdkafka's mock cluster (the light default), a real Apache
 * Kafka node started here (`--kafka`), or the cluster `KAFKA_BROKERS` names, which is used as it
 * is. Either way the topics the service is configured with exist before it starts.
 */
// kafkajs 2.2.4's negative request-queue timer, clamped as in the service (no TimeoutNegativeWarning on Node 24+).
import '../src/ingest/kafkajs-queue-timer.js';
import '../src/ingest/kafkajs-stopped-fetch.js';
import type { Admin } from 'kafkajs';
import type { KafkaConfig } from '../src/config/config.js';
import { createKafkaClient } from '../src/ingest/kafka-client.js';
import type { Logger } from '../src/base/logger.js';
import { startKafka } from '../tools/kafka/kafka-cluster.js';
import { startMockCluster } from '../tools/mock-cluster/mock-cluster.js';

/** Which broker: `external` is the cluster of `KAFKA_BROKERS`. */
export type LocalBrokerKind = 'mock' | 'kafka' | 'external';

/** A broker the stack uses. */
export interface LocalBroker {
  /** What it is, for the banner (e.g. "Apache Kafka 4.4.0, 1 node, started here"). */
  readonly description: string;
  readonly bootstrapServers: string[];
  /** Stops what was started here (nothing for an external cluster). */
  stop(): Promise<void>;
}

/** The topics the service reads and writes, with the partitions a new one gets. */
export function stackTopics(kafka: KafkaConfig): Array<{ name: string; partitions: number }> {
  const topics = [
    { name: kafka.resultsTopic, partitions: 6 },
    { name: kafka.requestsTopic, partitions: 3 },
  ];
  if (kafka.deadLetterTopic !== null) topics.push({ name: kafka.deadLetterTopic, partitions: 3 });
  return topics;
}

/**
 * Starts (or, for `external`, connects to) the broker and makes sure every topic exists. The
 * brokers started here run in a process group of their own, so a Ctrl-C reaches only the stack,
 * which stops the service before them.
 */
export async function startLocalBroker(kind: LocalBrokerKind, kafka: KafkaConfig, logger: Logger): Promise<LocalBroker> {
  const topics = stackTopics(kafka);
  if (kind === 'mock') {
    const mock = await startMockCluster({ brokers: 3, topics, detached: true });
    return { description: 'mock cluster (librdkafka), 3 brokers, started here', bootstrapServers: mock.bootstrapServers, stop: () => mock.stop() };
  }
  if (kind === 'kafka') {
    const cluster = await startKafka({ nodes: 1, topics, detached: true });
    await untilGroupsServed(await cluster.admin());
    return { description: `Apache Kafka ${cluster.version}, 1 node, started here`, bootstrapServers: cluster.bootstrapServers, stop: () => cluster.stop() };
  }
  // A cluster that does not let this client list or create topics may still serve the service.
  const note = await createMissingTopics(kafka, topics, logger).then(
    (created) => (created.length === 0 ? 'its topics already existed' : `created ${created.join(', ')}`),
    (error: Error) => `could not check or create its topics (${error.message}); the service's /readyz tells whether it can read`,
  );
  return { description: `KAFKA_BROKERS, not started here; ${note}`, bootstrapServers: [...kafka.brokers], stop: () => Promise.resolve() };
}

/**
 * Creates the topics a cluster does not have yet, replicated to up to three brokers, through the
 * service's own client (so the connection settings the service uses apply). Returns their names.
 */
async function createMissingTopics(kafka: KafkaConfig, topics: ReadonlyArray<{ name: string; partitions: number }>, logger: Logger): Promise<string[]> {
  const admin = createKafkaClient(kafka, logger).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.name));
    const { brokers } = await admin.describeCluster();
    const replicationFactor = Math.min(3, brokers.length);
    if (missing.length > 0)
      await admin.createTopics({ topics: missing.map((t) => ({ topic: t.name, numPartitions: t.partitions, replicationFactor })), waitForLeaders: false });
    await untilGroupsServed(admin);
    return missing.map((t) => `${t.name} (${t.partitions} partitions, replication factor ${replicationFactor})`);
  } finally {
    await admin.disconnect();
  }
}

/**
 * A new Kafka creates its offsets topic when a group first asks for a coordinator, and until it
 * is loaded the simulator and the service log "group coordinator is not available" errors that
 * mean nothing: this asks first, until a coordinator answers (at once on a cluster in use).
 */
async function untilGroupsServed(admin: Admin): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await admin.describeGroups(['local-stack']);
      return;
    } catch (error) {
      // Only a coordinator still on its way is waited for (not, say, a group this client may not read).
      if (!/coordinator/i.test((error as Error).message) || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
