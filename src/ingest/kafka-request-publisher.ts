/**
 * Hands start requests to the external system by producing them to the requests topic. One
 * producer per process, connected at startup; a request the broker does not accept in time fails
 * with BROKER_UNAVAILABLE so the caller can undo its record. The record's headers carry the
 * test's owner (`rcs-owner`, read back by the replicas of the replicated mode) and the caller's
 * trace context (`traceparent`) when tracing is on.
 */
import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import { ServiceError } from '../base/errors.js';
import { disposeOnce } from '../process/disposable.js';
import type { Logger } from '../base/logger.js';
import { withPublishSpan } from '../telemetry/trace-context.js';
import { CORRELATION_HEADER } from './record-envelope.js';
import { OWNER_HEADER } from './decode-request.js';
import { describeKafkaError } from './describe-kafka-error.js';
import type { RequestPublisher } from './request-publisher.js';

/** Options of {@link createKafkaRequestPublisher}. */
export interface KafkaRequestPublisherOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/** Creates the request publisher over an injected kafkajs client. */
export function createKafkaRequestPublisher(options: KafkaRequestPublisherOptions): RequestPublisher {
  const log = options.logger.child({ component: 'producer', topic: options.topic });
  // Acknowledged by every in-sync replica (at least min.insync.replicas), so a request the broker
  // acknowledged survives the loss of its leader. Not idempotent, on purpose: kafkajs 2.2.4 hands a
  // failed send's sequence number to the next send waiting on the same partition, and if the
  // broker had written the failed one after all, it takes the next request for its copy and drops
  // it while acknowledging it. startTest calls run concurrently, so that would be a silent loss;
  // without idempotence a retry after a lost answer can at worst deliver a request twice, which
  // the external system sees as the same correlation id again (delivery is at least once).
  const producer: Producer = options.kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    // Few, quick retries: the whole send should fit in the caller's timeout, so that a request
    // reported as failed is rarely delivered later behind its back.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: Math.max(200, options.timeoutMs / 4) },
  });
  let connecting: Promise<void> | undefined;
  let disposed = false;

  /** Connects once; a failed attempt is retried by the next caller. */
  const connect = (): Promise<void> => {
    connecting ??= producer.connect().catch((error: unknown) => {
      connecting = undefined;
      throw error;
    });
    return connecting;
  };

  return {
    start() {
      connect().catch((error: unknown) =>
        log.warn({ err: error, reason: describeKafkaError(error) }, 'producer not connected yet; will retry on first request'),
      );
    },

    async publish(request) {
      if (disposed) throw new ServiceError('SHUTTING_DOWN', 'The service is shutting down.');
      let timer: NodeJS.Timeout | undefined;
      let timedOut = false;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(
            new ServiceError(
              'BROKER_UNAVAILABLE',
              `The message broker did not confirm the request within ${options.timeoutMs} ms; it may still reach the external system: retry with the same correlationId.`,
            ),
          );
        }, options.timeoutMs);
      });
      try {
        await Promise.race([
          (async () => {
            await connect();
            // The caller has been told this request failed: it must not be sent after all.
            if (timedOut) return;
            const headers: Record<string, string> = { [CORRELATION_HEADER]: request.correlationId };
            if (request.owner !== null) headers[OWNER_HEADER] = request.owner;
            await withPublishSpan(options.topic, request.correlationId, headers, () =>
              producer.send({
                topic: options.topic,
                acks: -1,
                timeout: options.timeoutMs,
                messages: [
                  {
                    key: request.correlationId,
                    headers,
                    value: JSON.stringify({
                      correlationId: request.correlationId,
                      input: request.input ?? null,
                      requestedAt: new Date(request.requestedAt).toISOString(),
                    }),
                  },
                ],
              }),
            );
          })(),
          timeout,
        ]);
      } catch (error) {
        if (error instanceof ServiceError) throw error;
        log.error({ err: error, correlationId: request.correlationId, reason: describeKafkaError(error) }, 'request not accepted by the broker');
        throw new ServiceError('BROKER_UNAVAILABLE', 'The message broker refused the request.', { cause: error });
      } finally {
        clearTimeout(timer);
      }
    },

    dispose: disposeOnce(async () => {
      disposed = true;
      await producer.disconnect();
    }),
  };
}
