/**
 * The one entry point the rest of the service uses for the broker: it gets back the two seams
 * (consumer and request publisher) and never a kafkajs type.
 */
import type { KafkaConfig } from '../config/config.js';
import { disposeOnce } from '../process/disposable.js';
import type { Logger } from '../base/logger.js';
import type { BrokerSide, BrokerHandlers } from './broker-side.js';
import { createKafkaClient } from './kafka-client.js';
import { createKafkaDeadLetter } from './kafka-dead-letter.js';
import { createKafkaRequestConsumer } from './kafka-request-consumer.js';
import { createKafkaRequestPublisher } from './kafka-request-publisher.js';
import { createKafkaResultConsumer } from './kafka-result-consumer.js';

/**
 * Creates the consumer, the request publisher and the dead-letter sink over one Kafka client, and
 * in the replicated mode the requests consumer.
 */
export function createKafkaBrokerSide(options: { config: KafkaConfig; logger: Logger } & BrokerHandlers): BrokerSide {
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
    soleMember: options.config.soleMember,
    commitIntervalMs: options.config.commitIntervalMs,
    maxRecordBytes: options.config.maxResultBytes,
    ...(options.config.jsonShape === undefined ? {} : { jsonShape: options.config.jsonShape }),
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
  const requests =
    options.config.requestsGroupId === null
      ? undefined
      : createKafkaRequestConsumer({
          kafka,
          groupId: options.config.requestsGroupId,
          topic: options.config.requestsTopic,
          fetchMaxWaitMs: options.config.fetchMaxWaitMs,
          sessionTimeoutMs: options.config.sessionTimeoutMs,
          heartbeatIntervalMs: options.config.heartbeatIntervalMs,
          onRequests: options.onRequests,
          logger: options.logger,
        });
  return {
    consumer,
    publisher,
    ...(requests ? { requests } : {}),
    // The consumers first: while the results one drains its last chunks it may still dead-letter records.
    dispose: disposeOnce(async () => {
      await Promise.all([consumer.dispose(), requests?.dispose()]);
      await Promise.all([publisher.dispose(), deadLetter?.dispose()]);
    }),
  };
}
