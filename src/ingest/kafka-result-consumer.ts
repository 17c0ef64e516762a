/**
 * The long-lived consumer of the results topic: created once, started in the background at
 * startup, disconnected (committing) at shutdown. Each record is decoded and handed to `onEvent`;
 * its offset is resolved only after `onEvent` resolved, so nothing is acknowledged before it is
 * stored. Malformed records are logged with their coordinates, counted and skipped.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { isServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { recordCoordinates, type BrokerRecord } from './broker-record.js';
import { createCodecFaultWatch, pendingPartitions } from './codec-fault.js';
import type { ConsumerState, ConsumerStats, DeadLetterSink, ResultConsumer, ResultEventHandler } from './consumer.js';
import { decodeResult } from './decode-result.js';
import { describeKafkaError } from './describe-kafka-error.js';
import { createOffsetCommits } from './kafka-offset-commits.js';

/** Records handed to the store at once (see processBatch). */
const CHUNK = 200;
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
  readonly onEvent: ResultEventHandler;
  /** False to never commit offsets (replicated mode re-reads the topic at every start). Default true. */
  readonly commitOffsets?: boolean;
  /** How often processed offsets are committed (0: after every batch), and at rebalance and stop. Default 5000. */
  readonly commitIntervalMs?: number;
  /** Where malformed records go; without it they are only logged and counted. */
  readonly deadLetter?: DeadLetterSink;
  readonly logger: Logger;
}

/** Creates the results consumer over an injected kafkajs client. */
export function createKafkaResultConsumer(options: KafkaResultConsumerOptions): ResultConsumer {
  const log = options.logger.child({ component: 'consumer', topic: options.topic, groupId: options.groupId });
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  const lag = new Map<string, number>();
  let current: ConsumerState = { state: 'idle', since: Date.now() };
  let consumer: Consumer | undefined;
  let disposing: Promise<void> | undefined;
  // A batch that cannot be decompressed: reported by readiness until fetches decode again.
  const positions = new Map<number, bigint>();
  const codecFaults = createCodecFaultWatch({ topic: options.topic, log, locate: (candidates) => pendingPartitions({ ...options, candidates, positions }) });
  let assigned: readonly number[] = [];

  const setState = (state: ConsumerState['state'], reason?: string) => {
    current = reason === undefined ? { state, since: Date.now() } : { state, since: Date.now(), reason };
  };

  async function handle(message: KafkaMessage, topic: string, partition: number): Promise<void> {
    const record = toBrokerRecord(message, topic, partition);
    const decoded = decodeResult(record);
    if (!decoded.ok) {
      stats.malformed += 1;
      log.warn({ record: recordCoordinates(record), reason: decoded.reason }, 'skipping malformed result record');
      if (options.deadLetter !== undefined) {
        // Awaited before the offset is resolved: a record is never skipped without its copy.
        await options.deadLetter(record, decoded.reason);
        stats.deadLettered += 1;
      }
      return;
    }
    const outcome = await options.onEvent(decoded.message);
    if (outcome === 'inserted') stats.stored += 1;
    else if (outcome === 'duplicate') stats.duplicates += 1;
    else {
      stats.overLimit += 1;
      log.warn({ record: recordCoordinates(record), correlationId: decoded.message.correlationId }, 'test holds the maximum number of messages; result not stored');
    }
  }

  let draining = false;
  const commits = createOffsetCommits({
    enabled: options.commitOffsets ?? true,
    intervalMs: options.commitIntervalMs ?? 5000,
    idleConsumer: () => (draining ? undefined : consumer),
    log,
  });

  // Batches being processed (one per partition at most), awaited when draining at stop.
  const inFlight = new Set<Promise<void>>();

  function eachBatch(payload: EachBatchPayload): Promise<void> {
    const run = processBatch(payload);
    const settled: Promise<void> = run.catch(() => undefined).finally(() => inFlight.delete(settled));
    inFlight.add(settled);
    return run;
  }

  async function processBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    let processedUpTo: string | undefined;
    for (let from = 0; from < batch.messages.length; from += CHUNK) {
      if (!isRunning() || isStale() || draining) break;
      const chunk = batch.messages.slice(from, from + CHUNK);
      stats.consumed += chunk.length;
      // The records of a chunk are handed to the store together: their writes are issued in order
      // without waiting for each other (one round trip for a Redis pipeline, not one per record),
      // and their pushes follow in the same order. While the store is down the partition waits on
      // the chunk (still heartbeating, so it stays in the group) rather than skipping it or
      // churning the group with restarts; writing a chunk again is harmless, as appends are idempotent.
      for (let attempt = 0; ; attempt++) {
        try {
          await Promise.all(chunk.map((message) => handle(message, batch.topic, batch.partition)));
          break;
        } catch (error) {
          if (!(isServiceError(error) && error.code === 'STORE_UNAVAILABLE') || !isRunning() || draining) throw error;
          if (attempt === 0) log.warn({ record: `${batch.topic}/${batch.partition}/${chunk[0]?.offset}` }, 'state store unavailable; holding the partition until it returns');
          await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * 2 ** attempt)));
          await heartbeat();
        }
      }
      processedUpTo = (chunk.at(-1) as KafkaMessage).offset;
      resolveOffset(processedUpTo);
      positions.set(batch.partition, BigInt(processedUpTo) + 1n);
      // Long batches must not outlast the session; kafkajs throttles the heartbeat itself.
      await heartbeat();
    }
    const last = batch.messages.at(-1);
    if (last !== undefined) lag.set(`${batch.topic}/${batch.partition}`, Math.max(0, Number(batch.highWatermark) - Number(last.offset) - 1));
    // A batch a rebalance made stale may belong to another member now: its offset is not ours to commit.
    if (processedUpTo !== undefined && !isStale()) commits.processed(batch.topic, batch.partition, (BigInt(processedUpTo) + 1n).toString());
    if (consumer !== undefined) await commits.commitIfDue(consumer);
  }

  async function run(): Promise<void> {
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
    consumer = c;
    const touch = () => (lastContact = Date.now());
    c.on(c.events.HEARTBEAT, touch);
    c.on(c.events.FETCH_START, (e) => codecFaults.fetchStarted(String(e.payload.nodeId)));
    c.on(c.events.FETCH, (e) => {
      touch();
      if (codecFaults.fetched(String(e.payload.nodeId))) {
        failures = 0;
        log.info('compressed batches decode again; consumer recovered');
      }
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      setState('joined');
      touch();
      assigned = e.payload.memberAssignment[options.topic] ?? [];
      // Partitions that moved away: their next offset is now another member's to know.
      for (const p of positions.keys()) if (!assigned.includes(p)) positions.delete(p);
      if (codecFaults.assigned(assigned)) log.info('the partition that could not be decompressed moved to another member');
      // Joining proves nothing about a batch that cannot be decompressed: the backoff keeps growing.
      if (codecFaults.current() === undefined) failures = 0;
      log.info({ memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
    });
    c.on(c.events.REBALANCING, () => {
      setState('rebalancing');
      lag.clear();
      // Partitions may move: what this member processed is committed while it still may.
      void commits.commit(c);
    });
    c.on(c.events.CRASH, (e) => {
      const fault = codecFaults.crashed(e.payload.error, assigned);
      setState('crashed', fault?.reason ?? describeKafkaError(e.payload.error));
      // kafkajs restarts by itself after a retriable error (a coordinator still loading, a leader
      // that moved): a warning. The rest need a new consumer: an error.
      if (fault === undefined) log[e.payload.restart ? 'warn' : 'error']({ err: e.payload.error, restart: e.payload.restart, reason: describeKafkaError(e.payload.error) }, 'consumer crashed');
      // kafkajs restarts by itself only after retriable errors; after any other (a protocol error
      // from the broker, say) its consumer is dead, so a new one takes its place.
      if (!e.payload.restart && consumer === c) replace(c, e.payload.error);
    });
    c.on(c.events.STOP, () => setState('stopped'));
    setState('connecting');
    await c.connect();
    await c.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
    // Several partitions at once: while one partition's chunk waits for the store (a Redis round
    // trip and script), another's is decoded, so the store and this process work in parallel.
    // Order is kept where it matters, within a partition.
    await c.run({ eachBatchAutoResolve: false, autoCommit: false, partitionsConsumedConcurrently: PARTITIONS_AT_ONCE, eachBatch });
  }

  let failures = 0;
  let lastContact = Date.now();
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  /** Drops a consumer that will not recover and starts a fresh one after a growing pause. */
  function replace(failed: Consumer, error: unknown): void {
    if (disposing !== undefined || consumer !== failed) return;
    consumer = undefined;
    failures += 1;
    // Retrying a batch that cannot be decompressed gives the same failure (unless an operator moves
    // the group past it), and every retry rebalances the group: those retries slow down to a minute.
    const delay = Math.min(codecFaults.current() === undefined ? 10_000 : 60_000, 1000 * 2 ** Math.min(failures - 1, 6));
    const reason = codecFaults.current()?.reason ?? describeKafkaError(error);
    setState('crashed', reason);
    log.error({ err: error, retryInMs: delay, reason }, 'consumer stopped; starting a new one');
    void failed.disconnect().catch(() => undefined);
    const retry = setTimeout(start, delay);
    retry.unref();
  }

  function start(): void {
    if (consumer !== undefined || disposing !== undefined) return;
    // Not awaited: startup completes while the consumer connects and waits for records.
    run().catch((error: unknown) => {
      if (consumer !== undefined) replace(consumer, error);
    });
  }

  return {
    stats,
    lag: () => lag,
    state() {
      const fault = codecFaults.current();
      if (fault !== undefined && current.state !== 'stopped') return { state: 'crashed', since: fault.since, reason: fault.reason };
      // "joined" is only as true as the last answer from the broker.
      const silent = Date.now() - lastContact;
      if (current.state === 'joined' && silent > sessionTimeout) {
        return { state: 'stalled', since: lastContact, reason: `no answer from the broker for ${Math.round(silent / 1000)} s` };
      }
      return current;
    },
    start,
    dispose() {
      disposing ??= (async () => {
        commits.dispose();
        const c = consumer;
        if (c !== undefined) {
          // Finish the record in hand and take no more, so the final commit covers all that was stored.
          draining = true;
          await Promise.all(inFlight);
          await commits.commit(c);
          await c.disconnect();
        }
        setState('stopped');
      })();
      return disposing;
    },
  };
}

function toBrokerRecord(message: KafkaMessage, topic: string, partition: number): BrokerRecord {
  const headers: Record<string, string | undefined> = {};
  for (const [name, raw] of Object.entries(message.headers ?? {})) {
    const first = Array.isArray(raw) ? raw[0] : raw;
    headers[name] = first === undefined ? undefined : first.toString();
  }
  return { topic, partition, offset: message.offset, key: message.key, value: message.value, headers };
}
