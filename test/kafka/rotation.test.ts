/**
 * The rotation scenario (test/support/rotation.ts) on a real three-node Kafka cluster (replication
 * factor 3), where the group coordinator can die as well: three replicas behind the test's own
 * probing round-robin balancer, a read load throughout, a replica joining, one leaving with SIGTERM,
 * the coordinator killed (SIGKILL, then started again), one replica killed with SIGKILL. Every read
 * is answered, `/readyz` of the replicas serving the API stays 200 (the coordinator's death keeps
 * the consumers out of their group for tens of seconds: the check and the metric say so), and
 * nothing is lost or stored twice.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { fullyReplicated } from '../support/kafka-cluster.js';
import { createTestProducer, type TestProducer } from '../support/kafka.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { ROTATION_PARTITIONS, runRotation } from '../support/rotation.js';
import { uniqueTopics } from '../support/service.js';

const topics = uniqueTopics('rotation-cluster');
const redisPrefix = `rcs-rotation-cluster-${process.pid}-${Date.now()}`;
let cluster: KafkaCluster;
let producer: TestProducer;

beforeAll(async () => {
  cluster = await startKafka({
    nodes: 3,
    topics: [
      { name: topics.results, partitions: ROTATION_PARTITIONS },
      { name: topics.requests, partitions: 1 },
    ],
  });
  producer = await createTestProducer(cluster.bootstrapServers);
}, 180_000);

afterAll(async () => {
  await producer?.disconnect();
  await cluster?.stop();
  await deleteRedisKeys(`${redisPrefix}*`);
}, 60_000);

describe('three replicas on a three-node cluster', () => {
  it(
    'keep serving every read, ready throughout, through a join, a graceful leave, the coordinator killed and a replica killed',
    { timeout: 600_000 },
    async () => {
      await runRotation({
        label: 'kafka, three nodes',
        bootstrapServers: cluster.bootstrapServers,
        topics,
        redisPrefix,
        producer,
        groupEnv: {},
        killedMemberEnv: { KAFKA_SESSION_TIMEOUT_MS: '10000' },
        slowRebalances: false,
        async killCoordinator(groupId) {
          const victim = await cluster.coordinatorOf(groupId);
          await cluster.killNode(victim);
          return {
            async restore() {
              await cluster.startNode(victim);
              await fullyReplicated(cluster, [topics.results, topics.requests]);
            },
          };
        },
      });
    },
  );
});
