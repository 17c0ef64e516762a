/**
 * The broker-facing parts of one process, as the service sees them: the seams and their
 * shutdown. Built by kafka-broker-side.ts (the only place that wires kafkajs together).
 */
import type { Disposable } from '../process/disposable.js';
import type { ResultConsumer, ResultEventHandler } from './consumer.js';
import type { RequestConsumer, StartRequestHandler } from './request-consumer.js';
import type { RequestPublisher } from './request-publisher.js';

/** The broker-facing parts of one process. Disposing it stops the consumers (committing), then the producers. */
export interface BrokerSide extends Disposable {
  readonly consumer: ResultConsumer;
  readonly publisher: RequestPublisher;
  /** The requests topic's consumer: in the replicated mode only. */
  readonly requests?: RequestConsumer;
}

/** What the service does with what the consumers read. */
export interface BrokerHandlers {
  /** Stores each chunk of results. */
  readonly onEvents: ResultEventHandler;
  /** Records the tests of each batch of start requests (replicated mode). */
  readonly onRequests: StartRequestHandler;
}
