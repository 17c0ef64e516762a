/**
 * The Kafka part of the configuration: brokers, topics, consumer group timing, and (through
 * kafka-security.ts) TLS and SASL. Read through the configuration's reader.
 */
import type { JsonShapeLimits } from '../base/json-shape.js';
import type { Reader } from './reader.js';
import { ConfigError } from '../base/errors.js';
import { readKafkaSasl, readKafkaSsl, type KafkaSaslConfig, type KafkaSslConfig } from './kafka-security.js';

/** What a record may carry before it is decoded (headers, key); a record over them is refused and dead-lettered. */
export interface KafkaRecordBounds {
  readonly maxHeaders: number;
  readonly maxHeaderBytes: number;
  readonly maxKeyBytes: number;
}

/** Broker connection and topics. */
export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly resultsTopic: string;
  readonly requestsTopic: string;
  /** Where a consumer group with no committed offset starts: earliest retained (true) or latest. */
  readonly fromBeginning: boolean;
  /** How long `startTest` waits for the broker to accept the request. */
  readonly produceTimeoutMs: number;
  /** Longest a fetch waits for new records before returning empty (Kafka's own default is 500). */
  readonly fetchMaxWaitMs: number;
  /**
   * How long a request may go unanswered before its connection is given up (kafkajs-timed-out-connection.ts)
   * and the request retried on a new one; kafkajs gives a fetch at least its wait.
   */
  readonly requestTimeoutMs: number;
  /**
   * How long the group waits for a silent member before moving its partitions (Kafka refuses values
   * below its `group.min.session.timeout.ms`, 6 s by default).
   */
  readonly sessionTimeoutMs: number;
  /**
   * How often the consumer heartbeats. A rebalance is noticed at a heartbeat, so this bounds how
   * long a join or a graceful leave of another replica goes unnoticed. At most a third of the session timeout.
   */
  readonly heartbeatIntervalMs: number;
  /** How long a rebalance waits for every member to rejoin before it drops those that did not. */
  readonly rebalanceTimeoutMs: number;
  /** Where malformed result records are copied before they are skipped; null to only log and count. */
  readonly deadLetterTopic: string | null;
  /** Largest result record value, uncompressed, that is decoded; larger ones are malformed (`RESULT_MAX_BYTES`). */
  readonly maxResultBytes: number;
  /** Shape limits of a result's payload, the same as a test's input's (`JSON_MAX_*`); a payload past them is malformed. */
  readonly jsonShape?: JsonShapeLimits;
  /** Most bytes one compressed batch may decompress to (`KAFKA_MAX_BATCH_BYTES`). */
  readonly maxBatchBytes: number;
  /** Headers and key of one record, checked before kafkajs decodes them (`KAFKA_RECORD_MAX_*`). */
  readonly recordBounds: KafkaRecordBounds;
  /** False in replicated mode: the group never commits, so every start reads from the earliest record. */
  readonly commitOffsets: boolean;
  /** True in the memory mode: the state is this process's own, so it should be its group's only member (warned otherwise). */
  readonly soleMember: boolean;
  /**
   * Replicated mode only: the group of this replica's own in which it reads the requests topic
   * (`KAFKA_GROUP_ID.INSTANCE_ID.requests`), to learn the owner, input and start time of every
   * test, wherever it was started. Null otherwise: the requests topic is not read.
   */
  readonly requestsGroupId: string | null;
  /** How often processed offsets are committed; a crash redelivers at most this much work. */
  readonly commitIntervalMs: number;
  /** TLS to the brokers; null for a plaintext connection. */
  readonly ssl: KafkaSslConfig | null;
  /** SASL authentication; null for none. Holds the password: never log it (it redacts itself). */
  readonly sasl: KafkaSaslConfig | null;
}

/** Reads the Kafka settings; `stateKind` decides the replicated mode's group and commits. */
export function readKafka(read: Reader, stateKind: 'memory' | 'redis' | 'replicated'): KafkaConfig {
  const sessionTimeoutMs = read.int('KAFKA_SESSION_TIMEOUT_MS', 30_000, { min: 3000, max: 300_000 });
  const baseGroup = read.string('KAFKA_GROUP_ID', 'result-collection-service');
  let groupId = baseGroup;
  if (stateKind === 'replicated') {
    // Stable per replica (a StatefulSet pod name, a host name), never random: a random group per
    // start would leave a dead group behind at every restart.
    const instance = read.string('INSTANCE_ID', '');
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(instance)) {
      throw new ConfigError('INSTANCE_ID', 'is required with STATE_STORE=replicated: a stable name of this replica (letters, digits, ".", "_", "-")');
    }
    groupId = `${baseGroup}.${instance}`;
  }
  return {
    brokers: read.list('KAFKA_BROKERS', ['127.0.0.1:9092'], /^[^\s:,]+:\d{1,5}$/, 'host:port'),
    clientId: read.string('KAFKA_CLIENT_ID', 'result-collection-service'),
    groupId,
    resultsTopic: read.string('KAFKA_RESULTS_TOPIC', 'test-results'),
    requestsTopic: read.string('KAFKA_REQUESTS_TOPIC', 'test-requests'),
    // Replicated mode rebuilds everything it can still read, whatever the setting says.
    fromBeginning: stateKind === 'replicated' ? true : read.bool('KAFKA_FROM_BEGINNING', true),
    produceTimeoutMs: read.int('KAFKA_PRODUCE_TIMEOUT_MS', 5000, { min: 100, max: 120_000 }),
    fetchMaxWaitMs: read.int('KAFKA_FETCH_MAX_WAIT_MS', 500, { min: 10, max: 30_000 }),
    requestTimeoutMs: read.int('KAFKA_REQUEST_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000 }),
    sessionTimeoutMs,
    heartbeatIntervalMs: readHeartbeatInterval(read, sessionTimeoutMs),
    rebalanceTimeoutMs: read.int('KAFKA_REBALANCE_TIMEOUT_MS', 60_000, { min: 1000, max: 600_000 }),
    deadLetterTopic: read.string('KAFKA_DEAD_LETTER_TOPIC', '') || null,
    maxResultBytes: read.int('RESULT_MAX_BYTES', 1024 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
    maxBatchBytes: read.int('KAFKA_MAX_BATCH_BYTES', 64 * 1024 * 1024, { min: 1024 * 1024 }),
    recordBounds: {
      maxHeaders: read.int('KAFKA_RECORD_MAX_HEADERS', 64, { min: 1, max: 10_000 }),
      maxHeaderBytes: read.int('KAFKA_RECORD_MAX_HEADER_BYTES', 16 * 1024, { min: 256, max: 1024 * 1024 }),
      maxKeyBytes: read.int('KAFKA_RECORD_MAX_KEY_BYTES', 4 * 1024, { min: 256, max: 1024 * 1024 }),
    },
    commitOffsets: stateKind !== 'replicated',
    soleMember: stateKind === 'memory',
    // A group apart from the results one: kafkajs assigns a group's topics as if every member
    // subscribed to all of them.
    requestsGroupId: stateKind === 'replicated' ? `${groupId}.requests` : null,
    commitIntervalMs: read.int('KAFKA_COMMIT_INTERVAL_MS', 5000, { min: 0, max: 3_600_000 }),
    ssl: readKafkaSsl(read),
    sasl: readKafkaSasl(read),
  };
}

/** One second (a rebalance is noticed within it), and never more than a third of the session timeout, as Kafka advises. */
function readHeartbeatInterval(read: Reader, session: number): number {
  const interval = read.int('KAFKA_HEARTBEAT_INTERVAL_MS', 1000, { min: 100 });
  if (interval > session / 3)
    throw new ConfigError('KAFKA_HEARTBEAT_INTERVAL_MS', `must be at most a third of KAFKA_SESSION_TIMEOUT_MS (${Math.floor(session / 3)}), got ${interval}`);
  return interval;
}
