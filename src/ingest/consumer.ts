/**
 * The consumer seam: what the rest of the service (results, metrics, readiness) sees of the
 * results consumer, in types that name no broker client. The Kafka implementation lives in
 * kafka-result-consumer.ts; nothing outside this folder imports it except the composition root.
 */
import type { AppendResult, IncomingMessage } from '../domain/types.js';
import type { Disposable } from '../process/disposable.js';
import type { BrokerRecord } from './broker-record.js';

/**
 * Stores a chunk of decoded messages of one partition, in order, and answers one outcome per
 * message in the same order. Rejecting makes the whole chunk be handed over again (a
 * `STORE_UNAVAILABLE` error while the partition waits, any other after a redelivery).
 */
export type ResultEventHandler = (messages: readonly IncomingMessage[]) => Promise<ReadonlyArray<AppendResult['outcome']>>;

/** What readiness and metrics see of the consumer. */
export interface ConsumerState {
  /** `stalled`: a member of the group, but no fetch or heartbeat has succeeded for a session timeout. */
  readonly state: 'idle' | 'connecting' | 'joined' | 'stalled' | 'rebalancing' | 'crashed' | 'stopped';
  readonly since: number;
  readonly reason?: string;
}

/**
 * What a consumer did since it was created, beyond its current state: operators alert on it (a
 * consumer that has not fetched for minutes, one that keeps rebalancing) instead of routing on it.
 */
export interface ConsumerActivity {
  /** When a fetch last succeeded (an empty one counts); undefined before the first. */
  readonly lastFetchAt: number | undefined;
  /** Seconds since the last successful fetch, or since the consumer was created if none succeeded yet. */
  readonly secondsSinceFetch: number;
  /** Whether it has joined its group at least once. */
  readonly joinedOnce: boolean;
  /**
   * How many times it entered each state; `stalled`, which is derived from silence rather than
   * entered, counts the consumers replaced after going silent past their limit (consumer-stall-watch.ts).
   */
  readonly entered: Readonly<Record<ConsumerState['state'], number>>;
  /**
   * Set when the loop stopped for good without being stopped: no consumer runs and none will be
   * started. Nothing but a new process recovers from it (liveness fails on it).
   */
  readonly gaveUp?: string;
}

/** Counters since start. */
export interface ConsumerStats {
  consumed: number;
  stored: number;
  duplicates: number;
  malformed: number;
  /** Malformed records written to the dead-letter topic (a subset of `malformed`). */
  deadLettered: number;
  /** Records refused before they were decoded, their headers or key over the bounds (a subset of `malformed`). */
  oversized?: number;
  overLimit: number;
}

/** A stage of a record's way into the state: fetched by the consumer, stored. */
export type IngestStage = 'fetched' | 'stored';

/** Delays from records' timestamps to a stage, as bucket counts (see ingest-delays.ts). */
export interface DelayHistogram {
  /** Upper bounds in seconds, ascending. */
  readonly bounds: readonly number[];
  /** Per bucket, not cumulative; one more than `bounds` (the last counts what exceeds them all). */
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** Sends a record that cannot be decoded to the dead-letter topic; rejects if it could not. */
export type DeadLetterSink = (record: BrokerRecord, reason: string) => Promise<void>;

/** The results consumer. Disposing it stops fetching, commits what was processed and leaves the group. */
export interface ResultConsumer extends Disposable {
  /** Starts the loop in the background and returns at once. */
  start(): void;
  state(): ConsumerState;
  activity(): ConsumerActivity;
  readonly stats: Readonly<ConsumerStats>;
  /** Records behind the end of each assigned partition, as of the last batch fetched from it. */
  lag(): readonly PartitionLag[];
  /** How long records took from their timestamp to each stage, so far. */
  delays(): Readonly<Record<IngestStage, DelayHistogram>>;
}

/** How far one partition's processing is behind its end. */
export interface PartitionLag {
  readonly topic: string;
  readonly partition: number;
  /** Records between the last processed offset and the partition's high watermark. */
  readonly lag: number;
}
