/**
 * Conformance, on each broker: readiness keeps the API in rotation while the consumer group
 * changes. Three replicas behind the test's own probing round-robin balancer, a read load
 * throughout, a replica joining, one leaving with SIGTERM, one killed with SIGKILL: every read is
 * answered, `/readyz` of the replicas serving the API stays 200, each change shows in the consumer
 * check and the metric, and nothing is lost or stored twice (test/support/rotation.ts says exactly
 * what is asserted). The group coordinator's death, which needs a cluster of several nodes, is in
 * test/kafka/rotation.test.ts.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { TEST_BROKERS, type TestBroker } from '../support/brokers.js';
import { createTestProducer, type TestProducer } from '../support/kafka.js';
import { deleteRedisKeys } from '../support/redis-keys.js';
import { ROTATION_PARTITIONS, runRotation } from '../support/rotation.js';
import { uniqueTopics } from '../support/service.js';

describe.each(TEST_BROKERS)('on $name', (kind) => {
  const topics = uniqueTopics(`rotation-${kind.name}`);
  const redisPrefix = `rcs-rotation-${kind.name}-${process.pid}-${Date.now()}`;
  let broker: TestBroker;
  let producer: TestProducer;

  beforeAll(async () => {
    broker = await kind.start([
      { name: topics.results, partitions: ROTATION_PARTITIONS },
      { name: topics.requests, partitions: 1 },
    ]);
    producer = await createTestProducer(broker.bootstrapServers);
  }, 120_000);

  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
    await deleteRedisKeys(`${redisPrefix}*`);
  });

  it('keeps every API-serving replica ready and every read answered while a replica joins, one leaves and one is killed', { timeout: 300_000 }, async () => {
    await runRotation({
      label: kind.name,
      bootstrapServers: broker.bootstrapServers,
      topics,
      redisPrefix,
      producer,
      groupEnv: broker.groupEnv,
      killedMemberEnv: broker.killedMemberEnv,
      // The mock's coordinator waits session.timeout.ms - 1000 at every rebalance.
      slowRebalances: kind.name === 'mock',
    });
  });
});
