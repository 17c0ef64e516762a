/**
 * The consumer's batch processing, pipelined: kafkajs fetches a partition again only once
 * `eachBatch` returns, so `eachBatch` hands the batch to the partition's lane and returns at once,
 * and the next fetch is in flight while the lane stores. A lane stores its batches in order, cut
 * into chunks; each chunk is decoded and stored in one call (chunk-ingest.ts), and only then is its
 * offset marked processed, so nothing is committed before it is stored: kafkajs's resolved offset
 * only says where to fetch next, the commits (kafka-offset-commits.ts) say what was stored.
 *
 * A lane holds at most {@link LANE_BATCHES} batches; past that `eachBatch` waits (heartbeating), so
 * a slow or unavailable state throttles fetching instead of filling memory. While the state is
 * unavailable a lane waits on its chunk rather than skipping it; storing a chunk again is harmless,
 * as appends are idempotent. Any other failure while a batch is handled (decoding, converting the
 * records, storing, dead letters, marking, the commit after it: anything) rewinds the partition (a
 * seek) to the first record not yet stored and fails the partition's next batch, so kafkajs
 * retries it with its own backoff. A lane's promise never rejects and nothing of a failed batch is
 * marked after the failure: one `catch` around the whole of a batch's handling is the only way out
 * of it, so no failure can leave the lane going on past records it did not store (the next batch
 * would be marked, and committed, over them).
 */
import type { Batch, Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { isServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { ChunkIngest, DecodedChunk } from './chunk-ingest.js';
import type { IngestDelays } from './ingest-delays.js';
import type { OffsetCommits } from './kafka-offset-commits.js';
import type { BrokerRecord } from './broker-record.js';
import { toBrokerRecord } from './kafkajs-broker-record.js';

/**
 * Records handed to the state at once: one call, and for Redis one round trip, per chunk. On Redis
 * a test costs a fixed number of commands per call whatever it receives, so commands per record
 * fall as chunks grow (2.9 at 200 records, 0.6 at 1,000, 0.3 at 2,000, measured over 83 tests); a
 * chunk is still one partition's, in order, and its records are pushed once it is stored. The cost
 * of a larger chunk is the length of one script call, which holds a Redis node from other clients:
 * 13 ms on average at 2,000 records against 8.5 ms at 1,000, at full load on a 2-core machine,
 * for 17 % less Redis time per record (bench/README.md, "Ingest at full speed").
 */
export const CHUNK = 2000;

/** Batches a partition's lane holds (the one being stored included) before `eachBatch` waits. */
export const LANE_BATCHES = 2;

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

/** A batch handed to a lane: the lane generation it belongs to, when it was fetched, and its first record not yet stored. */
interface Taken {
  readonly generation: number;
  readonly fetchedAt: number;
  next: string;
}

/** One partition's batches, stored one after the other. */
interface Lane {
  readonly topic: string;
  readonly partition: number;
  /** The last batch handed over; the next one is stored after it. */
  tail: Promise<void>;
  /** Batches handed over and not yet stored or dropped. */
  held: number;
  /** Bumped to drop what the lane holds (a rebalance, a failed chunk). */
  generation: number;
  /** Set when a chunk failed: the partition's next batch fails with it (see the file's comment). */
  failed: unknown;
  /** Wakes an `eachBatch` waiting for room. */
  roomMade: (() => void) | undefined;
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
    if (lane === undefined)
      lanes.set(key, (lane = { topic, partition, tail: Promise.resolve(), held: 0, generation: 0, failed: undefined, roomMade: undefined }));
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
    if (!(await roomIn(lane, payload)) || batch.messages.length === 0) return;
    if (!isRunning() || isStale() || draining) return;
    // Where to fetch next, not what is stored: that is marked per chunk once it is. Before the batch
    // is taken, so that if kafkajs throws here the batch is simply not taken.
    payload.resolveOffset((batch.messages.at(-1) as KafkaMessage).offset);
    const taken: Taken = { generation: lane.generation, fetchedAt: Date.now(), next: (batch.messages[0] as KafkaMessage).offset };
    lane.held += 1;
    lane.tail = lane.tail.then(() => handleBatch(lane, taken, payload));
  }

  /** Stores one batch; never rejects: whatever fails rewinds the partition (see the file's comment). */
  async function handleBatch(lane: Lane, taken: Taken, payload: EachBatchPayload): Promise<void> {
    try {
      await storeBatch(lane, taken, payload);
    } catch (error) {
      failed(lane, taken, error);
    } finally {
      lane.held -= 1;
      lane.roomMade?.();
    }
  }

  /** Waits until the lane has room for one more batch; false if the batch is no longer wanted. */
  async function roomIn(lane: Lane, payload: EachBatchPayload): Promise<boolean> {
    while (lane.held >= LANE_BATCHES) {
      if (!payload.isRunning() || payload.isStale() || draining) return false;
      await new Promise<void>((resolve) => {
        const wake = setTimeout(resolve, 1000);
        lane.roomMade = () => {
          clearTimeout(wake);
          resolve();
        };
      });
      lane.roomMade = undefined;
      // A lane waiting on an unavailable state must not cost the partition its place in the group.
      await payload.heartbeat();
    }
    return true;
  }

  /**
   * Stores a batch chunk by chunk, marking each once stored; `taken.next` follows the first record
   * not yet stored. Throws whatever fails; returns early once the lane is no longer current.
   */
  async function storeBatch(lane: Lane, taken: Taken, payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const current = () => lane.generation === taken.generation && payload.isRunning() && !draining;
    for (let from = 0; from < batch.messages.length; from += CHUNK) {
      if (!current()) return;
      const records = chunkRecords(batch, from);
      const chunk = options.chunks.decode(records);
      await storeHoldingPartition(chunk, `${batch.topic}/${batch.partition}/${taken.next}`, { chunks: options.chunks, log, current });
      await chunk.deadLettered;
      // Stored; marked only if the partition is still this lane's to commit (no rebalance meanwhile).
      if (lane.generation !== taken.generation) return;
      const next = BigInt((records.at(-1) as BrokerRecord).offset) + 1n;
      taken.next = next.toString();
      positions.set(batch.partition, next);
      commits.processed(batch.topic, batch.partition, taken.next);
      observeDelays(batch.messages[from] as KafkaMessage, taken.fetchedAt);
    }
    noteLag(batch);
    const consumer = options.consumer();
    if (consumer !== undefined && !draining) await commits.commitIfDue(consumer);
  }

  function observeDelays(first: KafkaMessage, fetchedAt: number): void {
    const timestamp = Number(first.timestamp);
    if (timestamp > 0) {
      options.delays.observe('fetched', (fetchedAt - timestamp) / 1000);
      options.delays.observe('stored', (Date.now() - timestamp) / 1000);
    }
  }

  function noteLag(batch: Batch): void {
    let partitions = lag.get(batch.topic);
    if (partitions === undefined) lag.set(batch.topic, (partitions = new Map()));
    partitions.set(batch.partition, Math.max(0, Number(batch.highWatermark) - Number((batch.messages.at(-1) as KafkaMessage).offset) - 1));
  }

  /**
   * Handling a batch failed at `taken.next`, the first record not stored: drop what the lane holds,
   * seek back to that record, fail the partition's next batch. Not when the lane was revoked or is
   * draining meanwhile: the partition is read again from its committed offset then, which the
   * records from `taken.next` on are not under, as they were never marked. Nothing here throws: the
   * lane's state changes first, and the seek and the log line cannot escape.
   */
  function failed(lane: Lane, taken: Taken, error: unknown): void {
    const record = `${lane.topic}/${lane.partition}/${taken.next}`;
    if (lane.generation !== taken.generation || draining) {
      quietly(() =>
        log.warn({ record, err: error }, 'storing a batch failed while its partition was revoked or stopping; it is read again from the committed offset'),
      );
      return;
    }
    lane.generation += 1;
    lane.failed = error;
    quietly(() => options.consumer()?.seek({ topic: lane.topic, partition: lane.partition, offset: taken.next }));
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

/**
 * The records of the chunk of `batch` that starts at `from`, converted in one pass: no copy of the
 * batch's slice and no closure per chunk before the array the decoder takes.
 */
function chunkRecords(batch: Batch, from: number): BrokerRecord[] {
  const end = Math.min(batch.messages.length, from + CHUNK);
  const records: BrokerRecord[] = [];
  for (let i = from; i < end; i++) records.push(toBrokerRecord(batch.messages[i] as KafkaMessage, batch.topic, batch.partition));
  return records;
}

/**
 * Stores a chunk, waiting while the state is unavailable; any other failure, or one once the lane
 * is no longer current (stopping, rebalanced), is thrown.
 */
async function storeHoldingPartition(chunk: DecodedChunk, where: string, parts: { chunks: ChunkIngest; log: Logger; current: () => boolean }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await parts.chunks.store(chunk);
      return;
    } catch (error) {
      if (!(isServiceError(error) && error.code === 'STORE_UNAVAILABLE') || !parts.current()) throw error;
      // What failed, for operators: the first time, then every tenth attempt (about every 50 s).
      if (attempt % 10 === 0)
        parts.log.warn(
          { record: where, attempt, cause: error.cause instanceof Error ? error.cause.message : undefined },
          'state store unavailable; holding the partition until it returns',
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * 2 ** attempt)));
    }
  }
}

/**
 * Runs a step of the failure path whose own failure must not escape it: a seek without a running
 * consumer (the next one starts from the committed offset, which is before the record anyway).
 */
function quietly(step: () => void): void {
  try {
    step();
  } catch {
    // Nothing to do: the lane has already been failed.
  }
}
