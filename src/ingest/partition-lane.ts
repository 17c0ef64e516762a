/**
 * A partition's lane (kafka-batch-processor.ts drives it): the batches it holds and what they
 * weigh, the batches at its front stored as one, the records of one chunk converted for the
 * decoder, a chunk stored while the state is unavailable, and a step of the failure path that must
 * not throw. What a lane does with the consumer (marking, seeking, committing) stays there.
 */
import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { isServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { BrokerRecord } from './broker-record.js';
import type { ChunkIngest, DecodedChunk } from './chunk-ingest.js';
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

/** Batches a partition's lane always has room for (the one being stored included) before `eachBatch` may wait. */
export const LANE_BATCHES = 2;

/** Records a lane holds, at most, in more than {@link LANE_BATCHES} small batches: a chunk stored and the next one gathering. */
export const LANE_RECORDS = 2 * CHUNK;

/**
 * Bytes of keys and values a lane holds, at most, in more than {@link LANE_BATCHES} batches: about
 * what two batches held before small ones were gathered (kafkajs fetches at most 1 MB a partition).
 */
export const LANE_BYTES = 1024 * 1024;

/** One partition's batches, stored one group after the other. */
export interface Lane {
  readonly topic: string;
  readonly partition: number;
  /** Batches handed over and not yet started, in order. */
  readonly queue: Held[];
  /** The lane's run while it stores; settled when it has nothing in hand. */
  tail: Promise<void>;
  running: boolean;
  /** Batches handed over and not yet stored or dropped, and their records and bytes. */
  held: number;
  heldRecords: number;
  heldBytes: number;
  /** Bumped to drop what the lane holds (a rebalance, a failed chunk). */
  generation: number;
  /** Set when a chunk failed: the partition's next batch fails with it (see the file's comment). */
  failed: unknown;
  /** Wakes an `eachBatch` waiting for room. */
  roomMade: (() => void) | undefined;
}

/** A lane holding nothing. */
export function createLane(topic: string, partition: number): Lane {
  return {
    topic,
    partition,
    queue: [],
    tail: Promise.resolve(),
    running: false,
    held: 0,
    heldRecords: 0,
    heldBytes: 0,
    generation: 0,
    failed: undefined,
    roomMade: undefined,
  };
}

/** True while the lane has no room for another batch (see {@link LANE_BATCHES}). */
export function isFull(lane: Lane): boolean {
  return lane.held >= LANE_BATCHES && (lane.heldRecords >= LANE_RECORDS || lane.heldBytes >= LANE_BYTES);
}

/** Hands a fetched batch to the lane, in the current generation. */
export function hold(lane: Lane, payload: EachBatchPayload): void {
  const held: Held = { generation: lane.generation, fetchedAt: Date.now(), payload, bytes: recordBytes(payload.batch.messages) };
  lane.queue.push(held);
  lane.held += 1;
  lane.heldRecords += payload.batch.messages.length;
  lane.heldBytes += held.bytes;
}

/** Resolves once the lane releases a group, or after a second (the waiter heartbeats, then looks again). */
export async function roomMade(lane: Lane): Promise<void> {
  await new Promise<void>((resolve) => {
    const wake = setTimeout(resolve, 1000);
    lane.roomMade = () => {
      clearTimeout(wake);
      resolve();
    };
  });
  lane.roomMade = undefined;
}

/** A group is stored or dropped: the lane holds it no more, and an `eachBatch` waiting for room may go on. */
export function release(lane: Lane, group: Group): void {
  for (const member of group.members) {
    lane.held -= 1;
    lane.heldRecords -= member.payload.batch.messages.length;
    lane.heldBytes -= member.bytes;
  }
  lane.roomMade?.();
}

/**
 * The records of `messages` from `from` to `end` (excluded), converted in one pass: no copy of the
 * slice and no closure per chunk before the array the decoder takes.
 */
export function chunkRecords(messages: readonly KafkaMessage[], topic: string, partition: number, from: number, end: number): BrokerRecord[] {
  const records: BrokerRecord[] = [];
  for (let i = from; i < end; i++) records.push(toBrokerRecord(messages[i] as KafkaMessage, topic, partition));
  return records;
}

/**
 * Stores a chunk, waiting while the state is unavailable; any other failure, or one once the lane
 * is no longer current (stopping, rebalanced), is thrown.
 */
export async function storeHoldingPartition(
  chunk: DecodedChunk,
  where: string,
  parts: { chunks: ChunkIngest; log: Logger; current: () => boolean },
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await parts.chunks.store(chunk);
      return;
    } catch (error) {
      if (!(isServiceError(error) && error.code === 'STORE_UNAVAILABLE') || !parts.current()) throw error;
      // What failed, for operators: the first time, then every tenth attempt (about every 50 s).
      if (attempt % 10 === 0)
        parts.log.warn(
          { record: where, attempt, cause: error.cause instanceof Error ? error.cause.message : error.message },
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
export function quietly(step: () => void): void {
  try {
    step();
  } catch {
    // Nothing to do: the lane has already been failed.
  }
}

/** Bytes of a batch's record keys and values: what a lane's bound counts. */
function recordBytes(messages: readonly KafkaMessage[]): number {
  let bytes = 0;
  for (const m of messages) bytes += (m.value?.length ?? 0) + (m.key?.length ?? 0);
  return bytes;
}

/** A batch handed to a lane: the lane generation it belongs to, when it was fetched, and its bytes. */
export interface Held {
  readonly generation: number;
  readonly fetchedAt: number;
  readonly payload: EachBatchPayload;
  readonly bytes: number;
}

/** Batches stored as one: consecutive in their partition, of one lane generation. */
export interface Group {
  readonly generation: number;
  readonly fetchedAt: number;
  readonly members: readonly Held[];
  /** Their records, in order (the one batch's own array when the group is one batch). */
  readonly messages: readonly KafkaMessage[];
  readonly highWatermark: string;
  /** The first record not yet stored. */
  next: string;
}

/**
 * The batches at the front of `queue` stored as one: the first, and those after it that follow it
 * in the partition while the records stay within a chunk (a batch of a chunk or more goes alone,
 * cut). Only batches of one generation and one running fetcher, each starting past the last's end,
 * are joined: after kafkajs restarts its fetching, the new fetcher's batches (read again from the
 * committed offset) queue behind the old one's, which are dropped alone, never with them.
 */
export function takeGroup(queue: Held[]): Group {
  const first = queue.shift() as Held;
  const members = [first];
  let records = first.payload.batch.messages.length;
  for (let next = queue[0]; next !== undefined && joins(members.at(-1) as Held, next, first.generation); next = queue[0]) {
    if (records + next.payload.batch.messages.length > CHUNK) break;
    members.push(queue.shift() as Held);
    records += next.payload.batch.messages.length;
  }
  const last = (members.at(-1) as Held).payload.batch;
  const messages = members.length === 1 ? first.payload.batch.messages : members.flatMap((m) => m.payload.batch.messages);
  return {
    generation: first.generation,
    fetchedAt: first.fetchedAt,
    members,
    messages,
    highWatermark: last.highWatermark,
    next: (messages[0] as KafkaMessage).offset,
  };
}

/** True when `next` may be stored in one call with `previous`, the last batch of a group of `generation`. */
function joins(previous: Held, next: Held, generation: number): boolean {
  if (next.generation !== generation || !previous.payload.isRunning() || !next.payload.isRunning()) return false;
  const end = (previous.payload.batch.messages.at(-1) as KafkaMessage).offset;
  return BigInt((next.payload.batch.messages[0] as KafkaMessage).offset) > BigInt(end);
}
