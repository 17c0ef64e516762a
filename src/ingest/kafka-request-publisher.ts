/**
 * Hands start requests to the external system by producing them to the requests topic. One
 * producer per process, connected at startup; a request the broker does not accept in time fails
 * with BROKER_UNAVAILABLE so the caller can undo its record.
 */
import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { CORRELATION_HEADER } from './decode-result.js';
import { describeKafkaError } from './describe-kafka-error.js';

/** What the external system receives for each started test. */
export interface TestRequest {
  readonly correlationId: string;
  readonly input: unknown;
  /** Epoch milliseconds; sent as an ISO 8601 string. */
  readonly requestedAt: number;
}

/** The request seam: GraphQL and REST call this, never the broker client. */
export interface RequestPublisher {
  /** Resolves once the broker acknowledged the request; rejects with BROKER_UNAVAILABLE otherwise. */
  publish(request: TestRequest): Promise<void>;
  /** Connects ahead of the first request; failures are retried on the next publish. */
  start(): void;
  dispose(): Promise<void>;
}

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
  // Idempotent, with acks from every in-sync replica (at least min.insync.replicas): a request the
  // broker acknowledged survives the loss of its leader, and a retry after a lost answer is written
  // once, not twice (the broker drops the copy by its producer id and sequence number).
  let idempotent = true;
  const create = (): Producer =>
    options.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent,
      ...(idempotent ? { maxInFlightRequests: 1 } : {}),
      // Few, quick retries: the whole send must fit in the caller's timeout, so that a request
      // reported as failed is not delivered later behind its back.
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: Math.max(200, options.timeoutMs / 4) },
    });
  let producer = create();
  let connecting: Promise<Producer> | undefined;
  let disposed = false;

  /** The current producer, once connected. */
  const connect = (): Promise<Producer> => {
    const current = producer;
    connecting ??= current.connect().then(
      () => current,
      (error: unknown) => {
        if (producer !== current) throw error;
        connecting = undefined;
        if (!idempotent || !namesNoBroker(error)) throw error;
        // A broker that names no controller to ask for a producer id (librdkafka's mock cluster
        // does this; Kafka itself always names one) gets a plain producer: a retry after a lost
        // answer may then write a request twice.
        log.warn({ err: error }, 'the broker gives no producer id; requests are sent without idempotence');
        idempotent = false;
        producer = create();
        return connect();
      },
    );
    return connecting;
  };
  /**
   * After a failed send the broker may hold the request after all (its answer was lost). kafkajs
   * then reuses the request's sequence number for the next one, which the broker would take for
   * that copy and drop while acknowledging it: a silent loss. A new producer (a new producer id)
   * starts its sequences afresh.
   */
  const replace = (failed: Producer): void => {
    if (producer !== failed || disposed) return;
    producer = create();
    connecting = undefined;
    failed.disconnect().catch((error: unknown) => log.warn({ err: error }, 'could not close the replaced producer'));
  };

  return {
    start() {
      connect().catch((error: unknown) => log.warn({ err: error, reason: describeKafkaError(error) }, 'producer not connected yet; will retry on first request'));
    },

    async publish(request) {
      if (disposed) throw new ServiceError('SHUTTING_DOWN', 'The service is shutting down.');
      let sender = producer;
      let timer: NodeJS.Timeout | undefined;
      let timedOut = false;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new ServiceError('BROKER_UNAVAILABLE', `The message broker did not accept the request within ${options.timeoutMs} ms.`));
        }, options.timeoutMs);
      });
      try {
        await Promise.race([
          (async () => {
            sender = await connect();
            // The caller has been told this request failed: it must not be sent after all.
            if (timedOut) return;
            await sender.send({
              topic: options.topic,
              acks: -1,
              timeout: options.timeoutMs,
              messages: [
                {
                  key: request.correlationId,
                  headers: { [CORRELATION_HEADER]: request.correlationId },
                  value: JSON.stringify({
                    correlationId: request.correlationId,
                    input: request.input ?? null,
                    requestedAt: new Date(request.requestedAt).toISOString(),
                  }),
                },
              ],
            });
          })(),
          timeout,
        ]);
      } catch (error) {
        replace(sender);
        if (error instanceof ServiceError) throw error;
        log.error({ err: error, correlationId: request.correlationId, reason: describeKafkaError(error) }, 'request not accepted by the broker');
        throw new ServiceError('BROKER_UNAVAILABLE', 'The message broker refused the request.', { cause: error });
      } finally {
        clearTimeout(timer);
      }
    },

    async dispose() {
      if (disposed) return;
      disposed = true;
      await producer.disconnect();
    },
  };
}

/** Whether kafkajs failed because a broker named in the metadata is not in it (the mock's controller id). */
function namesNoBroker(error: unknown): boolean {
  for (let e = error as { name?: string; cause?: unknown } | undefined, depth = 0; e !== undefined && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.name === 'KafkaJSBrokerNotFound') return true;
  }
  return false;
}
