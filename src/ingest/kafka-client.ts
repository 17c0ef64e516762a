/** Builds the kafkajs client with its log lines routed into the service's structured logger. */
import { Kafka, logLevel as KafkaLogLevel, type LogEntry } from 'kafkajs';
import type { KafkaConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { registerKafkaCodecs } from './kafka-codecs.js';

/** Creates one kafkajs client; the producer and consumer of a process share it. */
export function createKafkaClient(config: Pick<KafkaConfig, 'brokers' | 'clientId'>, logger: Logger): Kafka {
  const log = logger.child({ component: 'kafka' });
  // Compressed batches are read with these; a codec whose package failed to load is named here
  // at startup, and again by the consumer if a batch ever needs it.
  for (const { codec, reason } of registerKafkaCodecs().missing) log.warn({ codec, reason }, `${codec} codec unavailable: ${codec}-compressed batches cannot be read`);
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    // Warnings and errors only: kafkajs is chatty at info level during every rebalance.
    logLevel: KafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        if (level <= KafkaLogLevel.ERROR) log.error(rest, message);
        else log.warn(rest, message);
      },
  });
}
