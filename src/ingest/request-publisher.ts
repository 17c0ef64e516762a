/**
 * The request seam: GraphQL and REST start tests through this (via results/test-starter.ts),
 * never through the broker client. The Kafka implementation lives in kafka-request-publisher.ts.
 */
import type { Disposable } from '../process/disposable.js';

/** What the external system receives for each started test. */
export interface TestRequest {
  readonly correlationId: string;
  readonly input: unknown;
  /**
   * The subject that started it, sent in a header of the service's own (`rcs-owner`) so that the
   * replicas of the replicated mode learn it; null for a request read back without one.
   */
  readonly owner: string | null;
  /** Epoch milliseconds, the test's `createdAt`; sent as an ISO 8601 string. */
  readonly requestedAt: number;
}

/** Hands start requests to the external system. Once disposed, `publish` rejects with SHUTTING_DOWN. */
export interface RequestPublisher extends Disposable {
  /** Resolves once the broker acknowledged the request; rejects with BROKER_UNAVAILABLE otherwise. */
  publish(request: TestRequest): Promise<void>;
  /** Connects ahead of the first request; failures are retried on the next publish. */
  start(): void;
}
