/**
 * The broker-facing parts of one process, as the service sees them: the two seams and their
 * shutdown. Built by kafka-ingest.ts (the only place that wires kafkajs together).
 */
import type { Disposable } from '../lifecycle/disposable.js';
import type { ResultConsumer } from './consumer.js';
import type { RequestPublisher } from './request-publisher.js';

/** The broker-facing parts of one process. Disposing it stops the consumer (committing), then the producers. */
export interface Ingest extends Disposable {
  readonly consumer: ResultConsumer;
  readonly publisher: RequestPublisher;
}
