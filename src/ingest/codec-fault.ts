/**
 * Turns a compressed batch the consumer cannot read into a fault that readiness reports until the
 * broker's fetches decode again. kafkajs decodes a fetch response (every assigned partition led by
 * one broker) at once and fails it whole, so the error names neither broker nor partition: the
 * broker is the one whose fetch was in flight, the partition one of those assigned to this member.
 */
import { findCodecFailure, type CodecName } from './kafka-codecs.js';

/** A batch that cannot be decompressed holds the consumer back. */
export interface CodecFault {
  readonly codec: CodecName;
  /** This member's partitions of the topic at the time; the batch is on one of them. */
  readonly partitions: readonly number[];
  readonly reason: string;
  readonly since: number;
}

/** Follows the consumer's fetches and crashes (see {@link createCodecFaultWatch}). */
export interface CodecFaultWatch {
  fetchStarted(nodeId: string): void;
  /** A fetch decoded; returns true when this cleared the fault. */
  fetched(nodeId: string): boolean;
  /** The fault behind a consumer crash, or undefined when the crash has nothing to do with compression. */
  crashed(error: unknown, partitions: readonly number[]): CodecFault | undefined;
  current(): CodecFault | undefined;
}

/** Creates the watch for one topic. */
export function createCodecFaultWatch(topic: string): CodecFaultWatch {
  const inFlight = new Set<string>();
  // Brokers whose fetch must decode before the fault is over (empty: any fetch will do).
  let failedOn = new Set<string>();
  let fault: CodecFault | undefined;
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
    crashed(error, partitions) {
      const failure = findCodecFailure(error);
      // The crashed consumer's fetches will never complete; the next consumer starts afresh.
      const pending = new Set(inFlight);
      inFlight.clear();
      if (failure === undefined) return undefined;
      failedOn = pending;
      const where = partitions.length === 1 ? `partition ${partitions[0]}` : `one of partitions ${partitions.join(', ')}`;
      const reason = `cannot read ${failure.codec}-compressed records of ${topic} (${where}): ${failure.message}`;
      fault = { codec: failure.codec, partitions: [...partitions], reason, since: fault?.since ?? Date.now() };
      return fault;
    },
    current: () => fault,
  };
}
