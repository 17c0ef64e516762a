/**
 * The consumer's batch processing, pipelined: kafkajs fetches a partition again only once
 * `eachBatch` returns, so `eachBatch` hands the batch to the partition's lane and returns at once,
 * and the next fetch is in flight while the lane stores. A lane stores its batches in order, in
 * chunks of at most {@link CHUNK} records: a batch larger than that is cut, and batches that queued
 * up behind the chunk being stored are joined into one (a broker that hands out small batches, or a
 * state slower than the fetches, still gets calls of a useful size: on Redis a test costs a fixed
 * number of commands per call). Each chunk is decoded and stored in one call (chunk-ingest.ts), and
 * only then is its offset marked processed, so nothing is committed before it is stored: kafkajs's
 * resolved offset only says where to fetch next, the commits (kafka-offset-commits.ts) say what was
 * stored.
 *
 * A lane holds at least {@link LANE_BATCHES} batches, and more while they are small (under
 * {@link LANE_RECORDS} records and {@link LANE_BYTES} bytes); past that `eachBatch` waits
 * (heartbeating), so a slow or unavailable state throttles fetching instead of filling memory.
 * While the state is unavailable a lane waits on its chunk rather than skipping it; storing a chunk
 * again is harmless, as appends are idempotent. Any other failure while a chunk is handled
 * (decoding, converting the records, storing, dead letters, marking: anything; the commit a lane
 * asks for after it is not waited for, and handles its own failure) rewinds the partition (a seek)
 * to the first record not yet stored and fails the partition's next batch, so kafkajs retries it
 * with its own backoff. A lane's run never rejects and nothing of a failed chunk's lane generation
 * is marked after the failure: one `catch` around
 * the whole of a chunk's handling is the only way out of it, so no failure can leave the lane going
 * on past records it did not store (the next batch would be marked, and committed, over them).
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import type { ChunkIngest } from './chunk-ingest.js';
import type { IngestDelays } from './ingest-delays.js';
import type { OffsetCommits } from './kafka-offset-commits.js';
import type { BrokerRecord } from './broker-record.js';
import {
  CHUNK,
  chunkRecords,
  createLane,
  hold,
  isFull,
  quietly,
  release,
  roomMade,
  storeHoldingPartition,
  takeGroup,
  type Group,
  type Lane,
} from './partition-lane.js';

export { CHUNK, LANE_BATCHES, LANE_BYTES, LANE_RECORDS } from './partition-lane.js';

/** Options of {@link createBatchProcessor}. */
export interface BatchProcessorOptions {
  readonly chunks: ChunkIngest;
  readonly commits: OffsetCommits;
  /** The consumer to commit and seek through (none while it is being replaced). */
  readonly consumer: () => Consumer | undefined;
  /** Where the fetched and stored delays of each chunk's first record are counted. */
  readonly delays: IngestDelays;
  readonly log: Logger;
}

/** kafkajs's `eachBatch`, with what the rest of the consumer needs to know of the batches. */
export interface BatchProcessor {
  eachBatch(payload: EachBatchPayload): Promise<void>;
  /** Records behind the end of each partition as of its last stored batch, keyed by `topic` then partition. */
  readonly lag: Map<string, Map<number, number>>;
  /** Next offset to read per partition, as far as this process stored them. */
  readonly positions: Map<number, bigint>;
  /** True once {@link BatchProcessor.drain} was called: no more chunks are taken. */
  readonly draining: boolean;
  /**
   * The group is rebalancing: lanes drop the batches they have not started and stop after the
   * chunk in hand, whose offsets are not marked (the partition may be another member's now).
   * Nothing is marked from the call on, so what was marked can be committed at once; resolves once
   * every lane stopped.
   */
  revoke(): Promise<void>;
  /** Takes no more chunks and resolves once the chunks in hand are stored (at stop, before the last commit). */
  drain(): Promise<void>;
}

/** Creates the batch processing of one consumer. */
export function createBatchProcessor(options: BatchProcessorOptions): BatchProcessor {
  const { commits, log } = options;
  const lag = new Map<string, Map<number, number>>();
  const positions = new Map<number, bigint>();
  const lanes = new Map<string, Lane>();
  let draining = false;

  const laneOf = (topic: string, partition: number): Lane => {
    const key = `${topic}/${partition}`;
    let lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, (lane = createLane(topic, partition)));
    return lane;
  };

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, isRunning, isStale } = payload;
    const lane = laneOf(batch.topic, batch.partition);
    if (lane.failed !== undefined) {
      const error = lane.failed;
      lane.failed = undefined;
      throw error;
    }
    const generation = lane.generation;
    if (!(await roomIn(lane, payload)) || batch.messages.length === 0) return;
    // Dropped, not held in a generation it was not fetched for, when the lane failed or was revoked
    // while it waited: the partition is read again from the seek or the committed offset.
    if (!isRunning() || isStale() || draining || lane.generation !== generation) return;
    // Where to fetch next, not what is stored: that is marked per chunk once it is. Before the batch
    // is taken, so that if kafkajs throws here the batch is simply not taken.
    payload.resolveOffset((batch.messages.at(-1) as KafkaMessage).offset);
    hold(lane, payload);
    if (!lane.running) {
      lane.running = true;
      lane.tail = run(lane);
    }
  }

  /** Stores what the lane is handed until it holds nothing; never rejects: whatever fails rewinds the partition. */
  async function run(lane: Lane): Promise<void> {
    while (lane.queue.length > 0) {
      const group = takeGroup(lane.queue);
      try {
        await storeGroup(lane, group);
      } catch (error) {
        failed(lane, group, error);
      } finally {
        release(lane, group);
      }
    }
    // Checked and cleared in one step: a batch handed over later starts a new run.
    lane.running = false;
  }

  /** Waits until the lane has room for one more batch; false if the batch is no longer wanted. */
  async function roomIn(lane: Lane, payload: EachBatchPayload): Promise<boolean> {
    while (isFull(lane)) {
      if (!payload.isRunning() || payload.isStale() || draining) return false;
      await roomMade(lane);
      // A lane waiting on an unavailable state must not cost the partition its place in the group.
      await payload.heartbeat();
    }
    return true;
  }

  /**
   * Stores a group chunk by chunk, marking each once stored; `group.next` follows the first record
   * not yet stored. Throws whatever fails; returns early once the lane is no longer current.
   */
  async function storeGroup(lane: Lane, group: Group): Promise<void> {
    const { topic, partition } = lane;
    const { messages } = group;
    const current = () => lane.generation === group.generation && group.members.every((m) => m.payload.isRunning()) && !draining;
    for (let from = 0; from < messages.length; from += CHUNK) {
      if (!current()) return;
      const records = chunkRecords(messages, topic, partition, from, Math.min(messages.length, from + CHUNK));
      const chunk = options.chunks.decode(records);
      await storeHoldingPartition(chunk, `${topic}/${partition}/${group.next}`, { chunks: options.chunks, log, current });
      await chunk.deadLettered;
      // Stored; marked only if the partition is still this lane's to commit (no rebalance meanwhile).
      if (lane.generation !== group.generation) return;
      const next = BigInt((records.at(-1) as BrokerRecord).offset) + 1n;
      group.next = next.toString();
      positions.set(partition, next);
      commits.processed(topic, partition, group.next);
      observeDelays(messages[from] as KafkaMessage, group.fetchedAt);
    }
    noteLag(topic, partition, group);
    const consumer = options.consumer();
    // Not awaited: kafkajs can retry a commit for minutes (kafkajs-moved-coordinator.ts), and a lane waiting on it filled
    // up and held `eachBatch`, so kafkajs neither heartbeated nor rejoined. A failed commit is logged and retried there.
    if (consumer !== undefined && !draining) commits.commitIfDue(consumer).catch(() => undefined);
  }

  function observeDelays(first: KafkaMessage, fetchedAt: number): void {
    const timestamp = Number(first.timestamp);
    if (timestamp > 0) {
      options.delays.observe('fetched', (fetchedAt - timestamp) / 1000);
      options.delays.observe('stored', (Date.now() - timestamp) / 1000);
    }
  }

  function noteLag(topic: string, partition: number, group: Group): void {
    let partitions = lag.get(topic);
    if (partitions === undefined) lag.set(topic, (partitions = new Map()));
    partitions.set(partition, Math.max(0, Number(group.highWatermark) - Number((group.messages.at(-1) as KafkaMessage).offset) - 1));
  }

  /**
   * Handling a batch failed at `group.next`, the first record not stored: drop what the lane holds,
   * seek back to that record, fail the partition's next batch. Not when the lane was revoked or is
   * draining meanwhile: the partition is read again from its committed offset then, which the
   * records from `group.next` on are not under, as they were never marked. Nothing here throws: the
   * lane's state changes first, and the seek and the log line cannot escape.
   */
  function failed(lane: Lane, group: Group, error: unknown): void {
    const record = `${lane.topic}/${lane.partition}/${group.next}`;
    if (lane.generation !== group.generation || draining) {
      quietly(() =>
        log.warn({ record, err: error }, 'storing a batch failed while its partition was revoked or stopping; it is read again from the committed offset'),
      );
      return;
    }
    lane.generation += 1;
    lane.failed = error;
    quietly(() => options.consumer()?.seek({ topic: lane.topic, partition: lane.partition, offset: group.next }));
    quietly(() => log.warn({ record, err: error }, 'storing a batch failed; the partition is read again from its first record not stored'));
  }

  const settleAll = () => Promise.all([...lanes.values()].map((lane) => lane.tail));

  return {
    lag,
    positions,
    get draining() {
      return draining;
    },
    eachBatch,
    async revoke() {
      for (const lane of lanes.values()) {
        lane.generation += 1;
        lane.failed = undefined;
      }
      await settleAll();
    },
    async drain() {
      draining = true;
      await settleAll();
    },
  };
}
