/**
 * The consumer's batch processing: kafkajs hands over a batch of one partition, which is cut into
 * chunks; each chunk is decoded and stored in one call (chunk-ingest.ts), and only then are its
 * offsets resolved, so nothing is acknowledged before it is stored. While the state is unavailable
 * the partition waits on its chunk (still heartbeating, so it stays in the group) rather than
 * skipping it or churning the group with restarts; storing a chunk again is harmless, as appends
 * are idempotent.
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { isServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BrokerRecord } from './broker-record.js';
import type { ChunkIngest, DecodedChunk } from './chunk-ingest.js';
import type { OffsetCommits } from './kafka-offset-commits.js';

/** Records handed to the state at once: one call, and for Redis one round trip, per chunk. */
export const CHUNK = 200;

/** Options of {@link createBatchProcessor}. */
export interface BatchProcessorOptions {
  readonly chunks: ChunkIngest;
  readonly commits: OffsetCommits;
  /** The consumer to commit through after a batch (none while it is being replaced). */
  readonly consumer: () => Consumer | undefined;
  readonly log: Logger;
}

/** kafkajs's `eachBatch`, with what the rest of the consumer needs to know of the batches. */
export interface BatchProcessor {
  eachBatch(payload: EachBatchPayload): Promise<void>;
  /** Records behind the end of each partition as of its last batch, keyed by `topic` then partition. */
  readonly lag: Map<string, Map<number, number>>;
  /** Next offset to read per partition, as far as this process stored them. */
  readonly positions: Map<number, bigint>;
  /** True once {@link BatchProcessor.drain} was called: no more chunks are taken. */
  readonly draining: boolean;
  /** Takes no more chunks and resolves once the batches in hand are done (at stop, before the last commit). */
  drain(): Promise<void>;
}

/** Creates the batch processing of one consumer. */
export function createBatchProcessor(options: BatchProcessorOptions): BatchProcessor {
  const { chunks, commits, log } = options;
  const lag = new Map<string, Map<number, number>>();
  const positions = new Map<number, bigint>();
  // Batches being processed (one per partition at most), awaited when draining at stop.
  const inFlight = new Set<Promise<void>>();
  let draining = false;

  async function processBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    let processedUpTo: string | undefined;
    for (let from = 0; from < batch.messages.length; from += CHUNK) {
      if (!isRunning() || isStale() || draining) break;
      const messages = batch.messages.slice(from, from + CHUNK);
      const chunk = chunks.decode(messages.map((message) => toBrokerRecord(message, batch.topic, batch.partition)));
      await storeHoldingPartition(chunk, `${batch.topic}/${batch.partition}/${messages[0]?.offset}`, payload, { chunks, log, draining: () => draining });
      await chunk.deadLettered;
      processedUpTo = (messages.at(-1) as KafkaMessage).offset;
      resolveOffset(processedUpTo);
      positions.set(batch.partition, BigInt(processedUpTo) + 1n);
      // Long batches must not outlast the session; kafkajs throttles the heartbeat itself.
      await heartbeat();
    }
    const last = batch.messages.at(-1);
    if (last !== undefined) {
      let partitions = lag.get(batch.topic);
      if (partitions === undefined) lag.set(batch.topic, (partitions = new Map()));
      partitions.set(batch.partition, Math.max(0, Number(batch.highWatermark) - Number(last.offset) - 1));
    }
    // A batch a rebalance made stale may belong to another member now: its offset is not ours to commit.
    if (processedUpTo !== undefined && !isStale()) commits.processed(batch.topic, batch.partition, (BigInt(processedUpTo) + 1n).toString());
    const consumer = options.consumer();
    if (consumer !== undefined) await commits.commitIfDue(consumer);
  }

  return {
    lag,
    positions,
    get draining() {
      return draining;
    },
    eachBatch(payload) {
      const run = processBatch(payload);
      const settled: Promise<void> = run.catch(() => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      return run;
    },
    async drain() {
      draining = true;
      await Promise.all(inFlight);
    },
  };
}

/**
 * Stores a chunk, waiting (and heartbeating) while the state is unavailable; any other failure,
 * or one while stopping, is thrown (the batch then fails and is redelivered).
 */
async function storeHoldingPartition(chunk: DecodedChunk, where: string, payload: EachBatchPayload, parts: { chunks: ChunkIngest; log: Logger; draining: () => boolean }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await parts.chunks.store(chunk);
      return;
    } catch (error) {
      if (!(isServiceError(error) && error.code === 'STORE_UNAVAILABLE') || !payload.isRunning() || parts.draining()) throw error;
      // What failed, for operators: the first time, then every tenth attempt (about every 50 s).
      if (attempt % 10 === 0) parts.log.warn({ record: where, attempt, cause: error.cause instanceof Error ? error.cause.message : undefined }, 'state store unavailable; holding the partition until it returns');
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * 2 ** attempt)));
      await payload.heartbeat();
    }
  }
}

/** The record in a shape that names no broker client (what the decoder and the dead-letter sink take). */
export function toBrokerRecord(message: KafkaMessage, topic: string, partition: number): BrokerRecord {
  const headers: Record<string, string | undefined> = {};
  const raw = message.headers;
  if (raw !== undefined) {
    for (const name of Object.keys(raw)) {
      const value = raw[name];
      const first = Array.isArray(value) ? value[0] : value;
      headers[name] = first === undefined ? undefined : first.toString();
    }
  }
  return { topic, partition, offset: message.offset, key: message.key, value: message.value, headers };
}
