/**
 * The requests seam of the replicated mode: every replica reads the requests topic (all of it,
 * from the earliest record, at every start) so that it knows each test's owner, input and start
 * time wherever the test was started. Types only, naming no broker client; the Kafka
 * implementation lives in kafka-request-consumer.ts.
 */
import type { Disposable } from '../process/disposable.js';
import type { ConsumerActivity, ConsumerState } from './consumer.js';
import type { TestRequest } from './request-publisher.js';

/**
 * Records the tests a batch of start requests names, in order. Rejecting makes the batch be read
 * again (recording a start twice changes nothing).
 */
export type StartRequestHandler = (requests: readonly TestRequest[]) => Promise<void>;

/** Counters since start. */
export interface RequestConsumerStats {
  consumed: number;
  /** Records that are not start requests: logged and skipped. */
  malformed: number;
}

/** The requests consumer. Disposing it stops fetching and leaves its group (it never commits). */
export interface RequestConsumer extends Disposable {
  /** Starts the loop in the background and returns at once. */
  start(): void;
  state(): ConsumerState;
  activity(): ConsumerActivity;
  readonly stats: Readonly<RequestConsumerStats>;
}
