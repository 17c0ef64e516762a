/**
 * The one entry point the rest of the service uses for the broker: it gets back the two seams
 * (consumer and request publisher) and never a kafkajs type.
 */
import type { KafkaConfig } from '../config.js';
import { disposeOnce } from '../lifecycle/disposable.js';
import type { Logger } from '../logger.js';
import type { ResultEventHandler } from './consumer.js';
import type { Ingest } from './ingest.js';
import { createKafkaClient } from './kafka-client.js';
import { createKafkaDeadLetter } from './kafka-dead-letter.js';
import { createKafkaRequestPublisher } from './kafka-request-publisher.js';
import { createKafkaResultConsumer } from './kafka-result-consumer.js';

/** Creates the consumer, the request publisher and the dead-letter sink over one Kafka client. */
export function createKafkaIngest(options: { config: KafkaConfig; logger: Logger; onEvents: ResultEventHandler }): Ingest {
  const kafka = createKafkaClient(options.config, options.logger);
  const deadLetter = options.config.deadLetterTopic === null ? undefined : createKafkaDeadLetter({ kafka, topic: options.config.deadLetterTopic });
  const consumer = createKafkaResultConsumer({
    kafka,
    groupId: options.config.groupId,
    topic: options.config.resultsTopic,
    fromBeginning: options.config.fromBeginning,
    fetchMaxWaitMs: options.config.fetchMaxWaitMs,
    sessionTimeoutMs: options.config.sessionTimeoutMs,
    heartbeatIntervalMs: options.config.heartbeatIntervalMs,
    rebalanceTimeoutMs: options.config.rebalanceTimeoutMs,
    commitOffsets: options.config.commitOffsets,
    commitIntervalMs: options.config.commitIntervalMs,
    onEvents: options.onEvents,
    ...(deadLetter ? { deadLetter: deadLetter.sink } : {}),
    logger: options.logger,
  });
  const publisher = createKafkaRequestPublisher({
    kafka,
    topic: options.config.requestsTopic,
    timeoutMs: options.config.produceTimeoutMs,
    logger: options.logger,
  });
  return {
    consumer,
    publisher,
    // The consumer first: while it drains its last chunks it may still dead-letter records.
    dispose: disposeOnce(async () => {
      await consumer.dispose();
      await Promise.all([publisher.dispose(), deadLetter?.dispose()]);
    }),
  };
}
