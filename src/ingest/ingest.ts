/**
 * The broker-facing parts of one process, as the service sees them: the two seams and their
 * shutdown. Built by kafka-ingest.ts (the only place that wires kafkajs together).
 */
import type { ResultConsumer } from './consumer.js';
import type { RequestPublisher } from './request-publisher.js';

/** The broker-facing parts of one process. */
export interface Ingest {
  readonly consumer: ResultConsumer;
  readonly publisher: RequestPublisher;
  /** Stops the consumer (committing), then the producers. Safe to call twice. */
  dispose(): Promise<void>;
}
