/**
 * The long-lived consumer of the results topic: created once, started in the background at
 * startup, disconnected (committing) at shutdown. This file is its wiring: the consumer's life
 * (events into the state machine, a dead or silent consumer replaced) is kafka-consumer-loop.ts's,
 * its batches go to the batch processing
 * (kafka-batch-processor.ts, which stores each chunk of records with one `onEvents` call while the
 * next fetch is in flight, and marks its offsets processed only after it resolved), and processed
 * offsets to the commit tracking (kafka-offset-commits.ts, which retries a failed commit and
 * commits only the partitions each join assigns this member). Malformed records are logged with
 * their coordinates, counted and skipped.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import type { JsonShapeLimits } from '../base/json-shape.js';
import { createChunkIngest } from './chunk-ingest.js';
import { createCodecFaultWatch, pendingPartitions, type CodecFaultWatch } from './codec-fault.js';
import { createConsumerStateMachine } from './consumer-state-machine.js';
import { defaultStallLimitMs } from './consumer-stall-watch.js';
import type { ConsumerStats, DeadLetterSink, ResultConsumer, ResultEventHandler } from './consumer.js';
import { describeKafkaError } from './describe-kafka-error.js';
import { createIngestDelays } from './ingest-delays.js';
import { createBatchProcessor, type BatchProcessor } from './kafka-batch-processor.js';
import { createConsumerLoop, type ConsumerLoopHooks } from './kafka-consumer-loop.js';
import { createOffsetCommits, type OffsetCommits } from './kafka-offset-commits.js';
import { warnIfGroupShared } from './shared-group-warning.js';

const PARTITIONS_AT_ONCE = 4;

/** Options of {@link createKafkaResultConsumer}. */
export interface KafkaResultConsumerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topic: string;
  readonly fromBeginning: boolean;
  /** Longest a fetch waits for new records before returning empty. */
  readonly fetchMaxWaitMs?: number;
  /** Consumer group session timeout: how long the group waits for a silent member (a crashed one) before moving its partitions. Default 30000. */
  readonly sessionTimeoutMs?: number;
  /**
   * How often the consumer heartbeats. kafkajs learns of a rebalance only from a heartbeat's
   * answer, so this bounds how long a join or a graceful leave of another member goes unnoticed
   * while the group waits for this member. Default 1000.
   */
  readonly heartbeatIntervalMs?: number;
  /** How long the coordinator waits for every member to rejoin during a rebalance. Default 60000. */
  readonly rebalanceTimeoutMs?: number;
  /**
   * How long kafkajs may give no sign of life before its consumer is replaced
   * (consumer-stall-watch.ts). Default: two session timeouts and a rebalance timeout.
   */
  readonly stallLimitMs?: number;
  /** Called once per chunk of well-formed records, in partition order. */
  readonly onEvents: ResultEventHandler;
  /** False to never commit offsets (replicated mode re-reads the topic at every start). Default true. */
  readonly commitOffsets?: boolean;
  /** True when this process's state is its own (the memory mode): a group it shares is warned of at each join (shared-group-warning.ts). */
  readonly soleMember?: boolean;
  /** How often processed offsets are committed (0: after every batch), and at rebalance and stop. Default 5000. */
  readonly commitIntervalMs?: number;
  /** Where malformed records go; without it they are only logged and counted. */
  readonly deadLetter?: DeadLetterSink;
  /** Largest record value (uncompressed bytes) decoded; larger ones are malformed (`RESULT_MAX_BYTES`). */
  readonly maxRecordBytes?: number;
  /** Shape limits of a payload (`JSON_MAX_*`); a record past them is malformed. */
  readonly jsonShape?: JsonShapeLimits;
  readonly logger: Logger;
}

/** What the hooks on kafkajs's events share: the parts of the results consumer they drive. */
interface Parts {
  readonly options: KafkaResultConsumerOptions;
  readonly log: Logger;
  readonly codecFaults: CodecFaultWatch;
  readonly commits: OffsetCommits;
  readonly batches: BatchProcessor;
  /** This member's partitions, as of its last join. */
  assigned: readonly number[];
}

/** Creates the results consumer over an injected kafkajs client. */
export function createKafkaResultConsumer(options: KafkaResultConsumerOptions): ResultConsumer {
  const log = options.logger.child({ component: 'consumer', topic: options.topic, groupId: options.groupId });
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0, oversized: 0 };
  // A batch that cannot be decompressed: reported by readiness until fetches decode again.
  const codecFaults = createCodecFaultWatch({
    topic: options.topic,
    log,
    locate: (candidates) => pendingPartitions({ ...options, candidates, positions: batches.positions }),
  });
  const commits = createOffsetCommits({
    enabled: options.commitOffsets ?? true,
    intervalMs: options.commitIntervalMs ?? 5000,
    idleConsumer: () => (batches.draining ? undefined : loop.current()),
    log,
  });
  const chunks = createChunkIngest({
    onEvents: options.onEvents,
    deadLetter: options.deadLetter,
    stats,
    log,
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
    ...(options.jsonShape === undefined ? {} : { jsonShape: options.jsonShape }),
  });
  const delays = createIngestDelays();
  const batches = createBatchProcessor({ chunks, commits, consumer: () => loop.current(), delays, log });
  const machine = createConsumerStateMachine({ sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000, fault: codecFaults.current });
  const parts: Parts = { options, log, codecFaults, commits, batches, assigned: [] };
  const loop = createConsumerLoop({
    name: 'consumer',
    machine,
    log,
    stallLimitMs: options.stallLimitMs ?? defaultStallLimitMs(options.sessionTimeoutMs ?? 30_000, options.rebalanceTimeoutMs ?? 60_000),
    create: () => createConsumer(options),
    run: (c) => run(c, options, batches),
    hooks: hooks(parts, machine),
  });

  return {
    stats,
    lag: () => [...batches.lag].flatMap(([topic, partitions]) => [...partitions].map(([partition, lag]) => ({ topic, partition, lag }))),
    delays: () => delays.snapshot(),
    state: () => machine.state(),
    activity: () => loop.activity(),
    start: () => loop.start(),
    dispose() {
      commits.dispose();
      // Finish the chunks in hand and take no more, so the final commit covers all that was stored.
      // Batches fetched but not started are dropped: the next owner reads them from that commit.
      return loop.dispose(async (c) => {
        await batches.drain();
        await commits.commit(c);
      });
    },
  };
}

function createConsumer(options: KafkaResultConsumerOptions): Consumer {
  return options.kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: options.fetchMaxWaitMs ?? 500,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    // Not a tenth of the session timeout (3 s by default): every member must notice a rebalance
    // before the group can resume, and a heartbeat a second costs the broker next to nothing.
    heartbeatInterval: options.heartbeatIntervalMs ?? 1000,
    rebalanceTimeout: options.rebalanceTimeoutMs ?? 60_000,
    // Restart after every failure, retriable or not: the loop must outlive broker and store faults.
    retry: { retries: 10, restartOnFailure: async () => true },
  });
}

async function run(c: Consumer, options: KafkaResultConsumerOptions, batches: BatchProcessor): Promise<void> {
  await c.connect();
  await c.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
  // Several partitions at once: while one partition's chunk waits for the store (a Redis round
  // trip and script), another's is decoded, so the store and this process work in parallel.
  // Order is kept where it matters, within a partition.
  await c.run({ eachBatchAutoResolve: false, autoCommit: false, partitionsConsumedConcurrently: PARTITIONS_AT_ONCE, eachBatch: batches.eachBatch });
}

/**
 * What the results consumer does on kafkajs's events, beside the state machine (kafka-consumer-loop.ts
 * calls these for its current consumer only): the codec fault watch, the commit tracking and the lanes.
 */
function hooks(parts: Parts, machine: { recovered(): void }): ConsumerLoopHooks {
  const { options, log, codecFaults, batches, commits } = parts;
  return {
    fetchStarted: (e) => codecFaults.fetchStarted(String(e.payload.nodeId)),
    fetched: (e) => {
      if (codecFaults.fetched(String(e.payload.nodeId))) {
        machine.recovered();
        log.info('compressed batches decode again; consumer recovered');
      }
    },
    joined: (e) => {
      parts.assigned = e.payload.memberAssignment[options.topic] ?? [];
      // Before any commit of the new generation: offsets of partitions that moved away are dropped.
      commits.assigned(e.payload.memberAssignment);
      // Partitions that moved away: their next offset is now another member's to know.
      for (const p of batches.positions.keys()) if (!parts.assigned.includes(p)) batches.positions.delete(p);
      if (codecFaults.assigned(parts.assigned)) log.info('the partition that could not be decompressed moved to another member');
      log.info({ memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
      if (options.soleMember === true)
        void warnIfGroupShared({ kafka: options.kafka, groupId: options.groupId, topic: options.topic, assigned: parts.assigned, log });
    },
    rebalancing: (c) => {
      batches.lag.clear();
      // Partitions may move: the lanes drop what they hold (it is read again from the committed
      // offsets) and mark nothing more from here on, so what this member stored is committed at
      // once rather than after the lanes stop: sent as kafkajs starts to rejoin, the commit reaches
      // the coordinator while the group still takes this member's generation. One the group refuses
      // (the generation is over) is retried only for the partitions the rejoin leaves to this member
      // (kafka-offset-commits.ts).
      void batches.revoke();
      void commits.commit(c);
    },
    crashed: (e) => {
      const fault = codecFaults.crashed(e.payload.error, parts.assigned);
      // kafkajs restarts by itself after a retriable error (a coordinator still loading, a leader
      // that moved): a warning. The rest need a new consumer: an error.
      if (fault === undefined) {
        const reason = describeKafkaError(e.payload.error);
        log[e.payload.restart ? 'warn' : 'error']({ err: e.payload.error, restart: e.payload.restart, reason }, 'consumer crashed');
      }
      return fault?.reason;
    },
  };
}
