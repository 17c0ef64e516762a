/**
 * Turns a compressed batch the consumer cannot read into a fault that readiness reports until the
 * broker's fetches decode again. kafkajs decodes a fetch response (every assigned partition led by
 * one broker) at once and fails it whole, so its error names neither broker nor partition: the
 * broker is the one whose fetch was in flight, and the partition is found by elimination (those of
 * this member that have records beyond what it read; see {@link pendingPartitions}).
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from '../base/logger.js';
import { findCodecFailure, type CodecName } from './kafka-codecs.js';
import { withAdmin } from './with-admin.js';

/** A batch that cannot be decompressed holds the consumer back. */
export interface CodecFault {
  readonly codec: CodecName;
  /** The partitions that can hold the batch (one, unless several have unread records). */
  readonly partitions: readonly number[];
  readonly reason: string;
  /** What failed, without where. */
  readonly message: string;
  readonly since: number;
}

/** Follows the consumer's fetches and crashes (see {@link createCodecFaultWatch}). */
export interface CodecFaultWatch {
  fetchStarted(nodeId: string): void;
  /** A fetch decoded; returns true when this cleared the fault. */
  fetched(nodeId: string): boolean;
  /**
   * The fault behind a consumer crash, or undefined when the crash has nothing to do with
   * compression. A fault is logged once its partition is located.
   */
  crashed(error: unknown, assigned: readonly number[]): CodecFault | undefined;
  /**
   * The member's partitions after a join. A fault on partitions it no longer holds is over here
   * (another member meets the batch now, and this one may never fetch from that broker again);
   * returns true when this cleared it.
   */
  assigned(partitions: readonly number[]): boolean;
  current(): CodecFault | undefined;
}

/** Options of {@link createCodecFaultWatch}. */
export interface CodecFaultWatchOptions {
  readonly topic: string;
  readonly log: Logger;
  /** Narrows a fault to the partitions that can hold the batch; without it, every assigned partition is named. */
  readonly locate?: (candidates: readonly number[]) => Promise<number[]>;
}

/** Creates the watch for one topic. */
export function createCodecFaultWatch(options: CodecFaultWatchOptions): CodecFaultWatch {
  const inFlight = new Set<string>();
  // Brokers whose fetch must decode before the fault is over (empty: any fetch will do).
  let failedOn = new Set<string>();
  let fault: CodecFault | undefined;

  async function locateAndLog(error: unknown, candidates: readonly number[]): Promise<void> {
    const pending = options.locate === undefined ? candidates : await options.locate(candidates).catch(() => candidates);
    const kept = candidates.filter((p) => pending.includes(p));
    if (fault === undefined) return;
    if (kept.length > 0 && kept.length < fault.partitions.length && fault.partitions.every((p) => candidates.includes(p)))
      fault = describe(options.topic, fault, kept, fault.since);
    options.log.error({ err: error, codec: fault.codec, topic: options.topic, partitions: fault.partitions }, fault.reason);
  }

  return {
    fetchStarted(nodeId) {
      inFlight.add(nodeId);
    },
    fetched(nodeId) {
      inFlight.delete(nodeId);
      if (fault === undefined) return false;
      failedOn.delete(nodeId);
      if (failedOn.size > 0) return false;
      fault = undefined;
      return true;
    },
    crashed(error, assigned) {
      const failure = findCodecFailure(error);
      // The crashed consumer's fetches will never complete; the next consumer starts afresh.
      const pending = new Set(inFlight);
      inFlight.clear();
      if (failure === undefined) return undefined;
      failedOn = pending;
      // The same fault again (the next retry): where it was located still holds, unless partitions moved.
      const known = fault?.codec === failure.codec && fault.partitions.every((p) => assigned.includes(p)) ? fault.partitions : assigned;
      fault = describe(options.topic, failure, known, fault?.since ?? Date.now());
      void locateAndLog(error, known);
      return fault;
    },
    assigned(partitions) {
      if (fault === undefined || fault.partitions.some((p) => partitions.includes(p))) return false;
      fault = undefined;
      failedOn = new Set();
      return true;
    },
    current: () => fault,
  };
}

function describe(topic: string, failure: { codec: CodecName; message: string }, partitions: readonly number[], since: number): CodecFault {
  const where = partitions.length === 1 ? `partition ${partitions[0]}` : `one of partitions ${partitions.join(', ')}`;
  const reason = `cannot read ${failure.codec}-compressed records of ${topic} (${where}): ${failure.message}`;
  return { codec: failure.codec, partitions: [...partitions], reason, message: failure.message, since };
}

/**
 * Of the `candidates`, the partitions that can hold the batch: those with records beyond the next
 * offset this member would read (what it processed, else the group's committed offset). A partition
 * read to its end cannot hold it.
 */
export async function pendingPartitions(options: {
  kafka: Kafka;
  topic: string;
  groupId: string;
  candidates: readonly number[];
  /** Next offset to read per partition, as far as this process processed them. */
  positions: ReadonlyMap<number, bigint>;
}): Promise<number[]> {
  const [ends, committed] = await withAdmin(options.kafka, (admin) =>
    Promise.all([admin.fetchTopicOffsets(options.topic), admin.fetchOffsets({ groupId: options.groupId, topics: [options.topic] })]),
  );
  return options.candidates.filter((p) => {
    const end = ends.find((o) => o.partition === p)?.high;
    const next = options.positions.get(p) ?? BigInt(committed[0]?.partitions.find((o) => o.partition === p)?.offset ?? '-1');
    return end === undefined || next < 0n || next < BigInt(end);
  });
}
