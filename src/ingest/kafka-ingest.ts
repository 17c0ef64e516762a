/**
 * The one entry point the rest of the service uses for the broker: it gets back the two seams
 * (consumer and request publisher) and never a kafkajs type.
 */
import type { KafkaConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { createKafkaClient } from './kafka-client.js';
import { createKafkaRequestPublisher, type RequestPublisher } from './kafka-request-publisher.js';
import { createKafkaResultConsumer, type ResultConsumer, type ResultEventHandler } from './kafka-result-consumer.js';

/** The broker-facing parts of one process. */
export interface Ingest {
  readonly consumer: ResultConsumer;
  readonly publisher: RequestPublisher;
}

/** Creates the consumer and the publisher over one Kafka client. */
export function createKafkaIngest(options: { config: KafkaConfig; logger: Logger; onEvent: ResultEventHandler }): Ingest {
  const kafka = createKafkaClient(options.config, options.logger);
  return {
    consumer: createKafkaResultConsumer({
      kafka,
      groupId: options.config.groupId,
      topic: options.config.resultsTopic,
      fromBeginning: options.config.fromBeginning,
      fetchMaxWaitMs: options.config.fetchMaxWaitMs,
      sessionTimeoutMs: options.config.sessionTimeoutMs,
      onEvent: options.onEvent,
      logger: options.logger,
    }),
    publisher: createKafkaRequestPublisher({
      kafka,
      topic: options.config.requestsTopic,
      timeoutMs: options.config.produceTimeoutMs,
      logger: options.logger,
    }),
  };
}
