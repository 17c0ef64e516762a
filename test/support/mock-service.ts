/**
 * The usual fixture of a test file: a one-broker mock cluster with topics of the file's own, and a
 * real service (in-process, port 0) consuming them.
 */
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { startTestService, uniqueTopics, type TestService, type TestServiceOptions } from './service.js';

/** Unique topic and group names, as `uniqueTopics` makes them. */
export type TestTopics = ReturnType<typeof uniqueTopics>;

/** The settings that point a service at `topics`, consuming in `group`. */
export function topicEnv(topics: TestTopics, group = topics.group): Record<string, string> {
  return { KAFKA_RESULTS_TOPIC: topics.results, KAFKA_REQUESTS_TOPIC: topics.requests, KAFKA_GROUP_ID: group };
}

/** A one-broker mock cluster with `topics`' results and requests topics, one partition each. */
export function startTopicsCluster(topics: TestTopics): Promise<MockCluster> {
  return startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.results, partitions: 1 },
      { name: topics.requests, partitions: 1 },
    ],
  });
}

/** Options of the service; its brokers and topics are the fixture's. */
export type MockClusterServiceOptions = Omit<TestServiceOptions, 'brokers'>;

/** A service under test on a mock cluster of its own; `stop()` stops both. */
export interface MockClusterService extends TestService {
  readonly cluster: MockCluster;
  readonly topics: TestTopics;
  /**
   * Another service on the same cluster and topics, in consumer group `<group>-<suffix>`, with
   * `options.env` over the topic settings. The caller stops it (before this one).
   */
  startAnother(suffix: string, options?: MockClusterServiceOptions): Promise<TestService>;
}

/** Starts the mock cluster with results and requests topics (one partition each), then the service. */
export async function startMockClusterService(label: string, options: MockClusterServiceOptions = {}): Promise<MockClusterService> {
  const topics = uniqueTopics(label);
  const cluster = await startTopicsCluster(topics);
  const startOn = (group: string, more: MockClusterServiceOptions) =>
    startTestService({ ...more, brokers: cluster.bootstrapServers, env: { ...topicEnv(topics, group), ...more.env } });
  let svc: TestService;
  try {
    svc = await startOn(topics.group, options);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return {
    ...svc,
    cluster,
    topics,
    startAnother: (suffix, more = {}) => startOn(`${topics.group}-${suffix}`, more),
    stop: async () => {
      await svc.stop();
      await cluster.stop();
    },
  };
}
