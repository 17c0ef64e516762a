/**
 * The brokers the conformance suite runs on: librdkafka's mock cluster and Apache Kafka itself (one
 * KRaft node). Each test file starts its own, so vitest's workers never share one.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startKafka } from '../../tools/kafka/kafka-cluster.js';
import { startMockCluster } from '../../tools/mock-cluster/mock-cluster.js';

/** A topic to create before the broker is handed out. */
export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
}

/** A running broker of either kind. */
export interface TestBroker {
  readonly name: BrokerName;
  readonly bootstrapServers: string[];
  /**
   * Service settings this broker needs for group tests to stay fast. The mock's coordinator waits
   * `session.timeout.ms - 1000` for more members at every rebalance and holds each fetch for its whole
   * wait, so tests shorten both there; on Kafka the service's defaults are used.
   */
  readonly groupEnv: Readonly<Record<string, string>>;
  /**
   * Settings for a member a test will SIGKILL: the coordinator only notices a dead member when its
   * session expires, so the victim gets a short session (10 s on Kafka instead of the default 30 s;
   * the mock's group settings already have 6 s). The other members keep `groupEnv`.
   */
  readonly killedMemberEnv: Readonly<Record<string, string>>;
  /**
   * How long this broker's coordinator waits before completing a rebalance once every member has
   * rejoined, for a given session timeout: the mock waits `session - 1000` ms, Kafka does not wait.
   */
  rebalanceDelayMs(sessionTimeoutMs: number): number;
  /** Creates a topic (kafkajs' admin.createTopics does not work on the mock, which has its own call). */
  createTopic(name: string, partitions: number): Promise<void>;
  /** A kafkajs admin client, disconnected at stop. Group descriptions exist on Kafka only (the mock lacks DescribeGroups). */
  admin(): Promise<Admin>;
  stop(): Promise<void>;
}

export type BrokerName = 'mock' | 'kafka';

/** One kind of broker the suite can start. */
export interface BrokerKind {
  readonly name: BrokerName;
  /** Starts a broker with these topics. A Kafka node on a busy machine can take most of a minute: hooks that call this allow 120 s. */
  start(topics: readonly TopicSpec[]): Promise<TestBroker>;
}

/** Connected admins per broker, closed when the broker stops. */
function adminsFor(bootstrapServers: string[]) {
  const admins: Admin[] = [];
  return {
    async admin(): Promise<Admin> {
      const admin = new Kafka({ clientId: 'conformance-admin', brokers: bootstrapServers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      admins.push(admin);
      return admin;
    },
    close: () => Promise.all(admins.splice(0).map((a) => a.disconnect().catch(() => undefined))),
  };
}

const MOCK_GROUP_ENV = { KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_FETCH_MAX_WAIT_MS: '100' };

/** librdkafka's mock cluster: light, for suites whose subject is not the broker. */
export const MOCK_BROKER: BrokerKind = {
  name: 'mock',
  async start(topics) {
    const cluster = await startMockCluster({ brokers: 1, topics: topics.map((t) => ({ ...t })) });
    const admins = adminsFor(cluster.bootstrapServers);
    return {
      name: 'mock',
      bootstrapServers: cluster.bootstrapServers,
      groupEnv: MOCK_GROUP_ENV,
      killedMemberEnv: MOCK_GROUP_ENV,
      rebalanceDelayMs: (session) => session - 1000,
      createTopic: (name, partitions) => cluster.createTopic(name, partitions),
      admin: admins.admin,
      async stop() {
        await admins.close();
        await cluster.stop();
      },
    };
  },
};

/** Apache Kafka itself (one node), as the conformance suite runs it. */
export const KAFKA_BROKER: BrokerKind = {
  name: 'kafka',
  async start(topics) {
    const cluster = await startKafka({ nodes: 1, topics: topics.map((t) => ({ ...t })) });
    const admins = adminsFor(cluster.bootstrapServers);
    return {
      name: 'kafka',
      bootstrapServers: cluster.bootstrapServers,
      groupEnv: {},
      killedMemberEnv: { KAFKA_SESSION_TIMEOUT_MS: '10000' },
      rebalanceDelayMs: () => 0,
      createTopic: (name, partitions) => cluster.createTopic(name, partitions),
      admin: admins.admin,
      async stop() {
        await admins.close();
        await cluster.stop();
      },
    };
  },
};

/**
 * The brokers to run the suite on: both by default; `TEST_BROKERS=mock` or `TEST_BROKERS=kafka`
 * (comma-separated) runs only those, e.g. on a machine without Java.
 */
export const TEST_BROKERS: readonly BrokerKind[] = (() => {
  const wanted = (process.env.TEST_BROKERS ?? 'mock,kafka')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = wanted.filter((w) => w !== 'mock' && w !== 'kafka');
  if (unknown.length > 0) throw new Error(`TEST_BROKERS names unknown brokers: ${unknown.join(', ')} (known: mock, kafka)`);
  return [MOCK_BROKER, KAFKA_BROKER].filter((b) => wanted.includes(b.name));
})();
