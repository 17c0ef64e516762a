/** Helpers for tests on a real multi-node Kafka cluster. */
import type { KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { eventually } from './graphql.js';

/**
 * Waits until every partition of `topics` (and of the offsets topic) has all three replicas in
 * sync: a restarted node has caught up.
 */
export async function fullyReplicated(cluster: KafkaCluster, topics: readonly string[]): Promise<void> {
  const admin = await cluster.admin();
  await eventually(
    async () => {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...topics, '__consumer_offsets'] });
      return meta.every((t) => t.partitions.every((p) => p.leader > 0 && p.isr.length === 3));
    },
    120_000,
    'every replica back in sync',
  );
}
