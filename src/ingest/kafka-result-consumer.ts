/**
 * The long-lived consumer of the results topic: created once, started in the background at
 * startup, disconnected (committing) at shutdown. This file is the loop's wiring: kafkajs's events
 * feed the state machine (consumer-state-machine.ts), its batches go to the batch processing
 * (kafka-batch-processor.ts, which stores each chunk of records with one `onEvents` call while the
 * next fetch is in flight, and marks its offsets processed only after it resolved), and processed
 * offsets to the commit tracking (kafka-offset-commits.ts, which retries a failed commit and
 * commits only the partitions each join assigns this member). Malformed records are logged with
 * their coordinates, counted and skipped.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import type { Disposable } from '../lifecycle/disposable.js';
import { createChunkIngest } from './chunk-ingest.js';
import { createCodecFaultWatch, pendingPartitions, type CodecFaultWatch } from './codec-fault.js';
import { createConsumerStateMachine, type ConsumerStateMachine } from './consumer-state-machine.js';
import { defaultStallLimitMs, silenceError, watchForStall } from './consumer-stall-watch.js';
import type { ConsumerStats, DeadLetterSink, ResultConsumer, ResultEventHandler } from './consumer.js';
import { describeKafkaError } from './describe-kafka-error.js';
import { createIngestDelays } from './ingest-delays.js';
import { createBatchProcessor, type BatchProcessor } from './kafka-batch-processor.js';
import { createOffsetCommits, type OffsetCommits } from './kafka-offset-commits.js';

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
  /** How often processed offsets are committed (0: after every batch), and at rebalance and stop. Default 5000. */
  readonly commitIntervalMs?: number;
  /** Where malformed records go; without it they are only logged and counted. */
  readonly deadLetter?: DeadLetterSink;
  /** Largest record value (uncompressed bytes) decoded; larger ones are malformed (`RESULT_MAX_BYTES`). */
  readonly maxRecordBytes?: number;
  readonly logger: Logger;
}

/** The parts of one consumer and what the loop's wiring shares between them. */
interface Loop {
  readonly options: KafkaResultConsumerOptions;
  readonly log: Logger;
  readonly machine: ConsumerStateMachine;
  readonly codecFaults: CodecFaultWatch;
  readonly commits: OffsetCommits;
  readonly batches: BatchProcessor;
  /** The kafkajs consumer in use; none before the start and while a dead one is replaced. */
  consumer: Consumer | undefined;
  disposing: Promise<void> | undefined;
  /** This member's partitions, as of its last join. */
  assigned: readonly number[];
  /** Why the loop ended with no consumer running and none to come (see `ConsumerActivity.gaveUp`). */
  gaveUp: string | undefined;
  /** Replaces a consumer that went silent; from the first start to the stop. */
  stallWatch: Disposable | undefined;
}

/** Creates the results consumer over an injected kafkajs client. */
export function createKafkaResultConsumer(options: KafkaResultConsumerOptions): ResultConsumer {
  const log = options.logger.child({ component: 'consumer', topic: options.topic, groupId: options.groupId });
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  // A batch that cannot be decompressed: reported by readiness until fetches decode again.
  const codecFaults = createCodecFaultWatch({
    topic: options.topic,
    log,
    locate: (candidates) => pendingPartitions({ ...options, candidates, positions: batches.positions }),
  });
  const commits = createOffsetCommits({
    enabled: options.commitOffsets ?? true,
    intervalMs: options.commitIntervalMs ?? 5000,
    idleConsumer: () => (batches.draining ? undefined : loop.consumer),
    log,
  });
  const chunks = createChunkIngest({
    onEvents: options.onEvents,
    deadLetter: options.deadLetter,
    stats,
    log,
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
  });
  const delays = createIngestDelays();
  const batches = createBatchProcessor({ chunks, commits, consumer: () => loop.consumer, delays, log });
  const machine = createConsumerStateMachine({ sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000, fault: codecFaults.current });
  const loop: Loop = {
    options,
    log,
    machine,
    codecFaults,
    commits,
    batches,
    consumer: undefined,
    disposing: undefined,
    assigned: [],
    gaveUp: undefined,
    stallWatch: undefined,
  };

  return {
    stats,
    lag: () => [...batches.lag].flatMap(([topic, partitions]) => [...partitions].map(([partition, lag]) => ({ topic, partition, lag }))),
    delays: () => delays.snapshot(),
    state: () => machine.state(),
    activity: () => ({ ...machine.activity(), ...(loop.gaveUp === undefined ? {} : { gaveUp: loop.gaveUp }) }),
    start: () => start(loop),
    dispose() {
      loop.disposing ??= (async () => {
        commits.dispose();
        await loop.stallWatch?.dispose();
        const c = loop.consumer;
        if (c !== undefined) {
          // Finish the chunks in hand and take no more, so the final commit covers all that was stored.
          // Batches fetched but not started are dropped: the next owner reads them from that commit.
          await batches.drain();
          await commits.commit(c);
          await c.disconnect();
        }
        machine.enter('stopped');
      })();
      return loop.disposing;
    },
  };
}

/** Starts a consumer in the background, unless one runs or the consumer is stopping. */
function start(loop: Loop): void {
  if (loop.consumer !== undefined || loop.disposing !== undefined) return;
  loop.stallWatch ??= watchForStall({
    machine: loop.machine,
    limitMs: loop.options.stallLimitMs ?? defaultStallLimitMs(loop.options.sessionTimeoutMs ?? 30_000, loop.options.rebalanceTimeoutMs ?? 60_000),
    onStall: (silentMs) => {
      if (loop.consumer !== undefined) replace(loop, loop.consumer, silenceError(silentMs), 'silent');
    },
  });
  // Not awaited: startup completes while the consumer connects and waits for records.
  run(loop).catch((error: unknown) => {
    if (loop.consumer !== undefined) {
      replace(loop, loop.consumer, error);
      return;
    }
    // No kafkajs consumer could even be created: there is nothing to replace and no event will
    // come to retry, so only a new process can recover. Liveness reports it.
    loop.gaveUp = describeKafkaError(error);
    loop.machine.enter('crashed', loop.gaveUp);
    loop.log.error({ err: error, reason: loop.gaveUp }, 'consumer could not be created; giving up');
  });
}

async function run(loop: Loop): Promise<void> {
  const { options } = loop;
  const c = options.kafka.consumer({
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
  loop.consumer = c;
  listen(loop, c);
  loop.machine.enter('connecting');
  await c.connect();
  await c.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
  // Several partitions at once: while one partition's chunk waits for the store (a Redis round
  // trip and script), another's is decoded, so the store and this process work in parallel.
  // Order is kept where it matters, within a partition.
  await c.run({ eachBatchAutoResolve: false, autoCommit: false, partitionsConsumedConcurrently: PARTITIONS_AT_ONCE, eachBatch: loop.batches.eachBatch });
}

/**
 * Feeds kafkajs's events to the state machine, the codec fault watch and the commit tracking, while
 * `c` is the loop's consumer: one replaced (it died, or went silent) may still be leaving when its
 * broker answers again, and its `stopped`, rebalance or crash must not stand for the new one's.
 */
function listen(loop: Loop, c: Consumer): void {
  const { options, log, machine, codecFaults, batches } = loop;
  const replaced = () => loop.consumer !== c;
  c.on(c.events.HEARTBEAT, () => replaced() || machine.contact());
  c.on(c.events.FETCH_START, (e) => replaced() || codecFaults.fetchStarted(String(e.payload.nodeId)));
  c.on(c.events.FETCH, (e) => {
    if (replaced()) return;
    machine.fetched();
    if (codecFaults.fetched(String(e.payload.nodeId))) {
      machine.recovered();
      log.info('compressed batches decode again; consumer recovered');
    }
  });
  c.on(c.events.GROUP_JOIN, (e) => {
    if (replaced()) return;
    loop.assigned = e.payload.memberAssignment[options.topic] ?? [];
    // Before any commit of the new generation: offsets of partitions that moved away are dropped.
    loop.commits.assigned(e.payload.memberAssignment);
    // Partitions that moved away: their next offset is now another member's to know.
    for (const p of batches.positions.keys()) if (!loop.assigned.includes(p)) batches.positions.delete(p);
    if (codecFaults.assigned(loop.assigned)) log.info('the partition that could not be decompressed moved to another member');
    machine.enter('joined');
    log.info({ memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
  });
  c.on(c.events.REBALANCING, () => {
    if (replaced()) return;
    machine.enter('rebalancing');
    batches.lag.clear();
    // Partitions may move: the lanes drop what they hold (it is read again from the committed
    // offsets) and mark nothing more from here on, so what this member stored is committed at
    // once rather than after the lanes stop: sent as kafkajs starts to rejoin, the commit reaches
    // the coordinator while the group still takes this member's generation. One the group refuses
    // (the generation is over) is retried only for the partitions the rejoin leaves to this member
    // (kafka-offset-commits.ts).
    void batches.revoke();
    void loop.commits.commit(c);
  });
  c.on(c.events.CRASH, (e) => {
    if (replaced()) return;
    const fault = codecFaults.crashed(e.payload.error, loop.assigned);
    const reason = describeKafkaError(e.payload.error);
    machine.enter('crashed', fault?.reason ?? reason);
    // kafkajs restarts by itself after a retriable error (a coordinator still loading, a leader
    // that moved): a warning. The rest need a new consumer: an error.
    if (fault === undefined) log[e.payload.restart ? 'warn' : 'error']({ err: e.payload.error, restart: e.payload.restart, reason }, 'consumer crashed');
    // kafkajs restarts by itself only after retriable errors; after any other (a protocol error
    // from the broker, say) its consumer is dead, so a new one takes its place.
    if (!e.payload.restart) replace(loop, c, e.payload.error);
  });
  c.on(c.events.STOP, () => replaced() || machine.enter('stopped'));
}

/** Drops a consumer that will not recover (it died, or went `silent`) and starts a fresh one after a growing pause. */
function replace(loop: Loop, failed: Consumer, error: unknown, cause: 'died' | 'silent' = 'died'): void {
  if (loop.disposing !== undefined || loop.consumer !== failed) return;
  loop.consumer = undefined;
  const { delayMs, reason } = loop.machine.replaced(describeKafkaError(error), cause);
  loop.log.error(
    { err: error, retryInMs: delayMs, reason },
    cause === 'silent' ? 'consumer went silent; starting a new one' : 'consumer stopped; starting a new one',
  );
  void failed.disconnect().catch(() => undefined);
  const retry = setTimeout(() => start(loop), delayMs);
  retry.unref();
}
