/**
 * Builds the kafkajs client with its log lines routed into the service's structured logger. The
 * consumer, the request producer and the dead-letter producer all come from this one client, so
 * they share its TLS and SASL settings.
 */
import type { ConnectionOptions } from 'node:tls';
import { Kafka, logLevel as KafkaLogLevel, type LogEntry, type SASLOptions } from 'kafkajs';
import type { KafkaConfig } from '../config/config.js';
import type { Logger } from '../base/logger.js';
import { registerKafkaCodecs } from './kafka-codecs.js';
// Before any connection: kafkajs's request queue timer without Node's negative-delay warning, and
// without its check every millisecond while nothing is pending.
import './kafkajs-queue-timer.js';
import './kafkajs-idle-queue.js';
import './kafkajs-stopped-fetch.js';
import './kafkajs-moved-coordinator.js';
import './kafkajs-commit-across-rejoin.js';
import './kafkajs-timed-out-connection.js';
import { setRecordBounds } from './kafkajs-record-bounds.js';

const TLS_CONNECTION_TIMEOUT_MS = 5000;

/**
 * Broker answers that are part of normal group coordination, which kafkajs logs as errors: every
 * member hears "rebalancing" at each join or leave, and a new or moved coordinator is "loading"
 * for a moment. kafkajs handles them itself; logged at info so an error line means a fault.
 */
const ROUTINE_BROKER_ANSWERS = new Set([
  'The group is rebalancing, so a rejoin is needed',
  "The coordinator is loading and hence can't process requests for this group",
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
]);

/** Creates one kafkajs client; the producer and consumer of a process share it. */
export function createKafkaClient(
  config: Pick<KafkaConfig, 'brokers' | 'clientId'> & Partial<Pick<KafkaConfig, 'ssl' | 'sasl' | 'maxBatchBytes' | 'recordBounds' | 'requestTimeoutMs'>>,
  logger: Logger,
): Kafka {
  const log = logger.child({ component: 'kafka' });
  const ssl = config.ssl ?? null;
  const sasl = config.sasl ?? null;
  // Said once at startup: what the connection is, without any secret.
  log.info(
    {
      brokers: config.brokers,
      ssl: ssl !== null,
      verifyCertificate: ssl?.verify,
      clientCertificate: ssl?.cert != null,
      sasl: sasl?.mechanism ?? false,
      username: sasl?.username,
    },
    'broker connection settings',
  );
  if (ssl !== null && !ssl.verify)
    log.warn("KAFKA_SSL_VERIFY=false: the brokers' certificates are not verified, so anyone on the network path can pose as the broker");
  if (sasl !== null && ssl === null)
    log.warn(
      { mechanism: sasl.mechanism },
      `SASL without TLS: ${sasl.mechanism === 'plain' ? 'the password' : 'every record'} crosses the network unencrypted; set KAFKA_SSL=true unless the network is private`,
    );
  // Compressed batches are read with these; a codec whose package failed to load is named here
  // at startup, and again by the consumer if a batch ever needs it.
  for (const { codec, reason } of registerKafkaCodecs({}, config.maxBatchBytes).missing)
    log.warn({ codec, reason }, `${codec} codec unavailable: ${codec}-compressed batches cannot be read`);
  // Before any fetch: a record over these is refused before kafkajs decodes its headers.
  if (config.recordBounds !== undefined) setRecordBounds(config.recordBounds);
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    // kafkajs's 1 s connection timeout includes the TLS handshake, which a broker far away (or a
    // busy one: a JVM's first handshakes are slow) can take longer than; each timeout is a retry.
    ...(ssl === null ? {} : { ssl: tlsOptions(ssl), connectionTimeout: TLS_CONNECTION_TIMEOUT_MS }),
    ...(sasl === null ? {} : { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions }),
    // A connection whose request goes unanswered this long is given up (kafkajs-timed-out-connection.ts).
    ...(config.requestTimeoutMs === undefined ? {} : { requestTimeout: config.requestTimeoutMs }),
    // Warnings and errors only: kafkajs is chatty at info level during every rebalance.
    logLevel: KafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        if (typeof rest.error === 'string' && ROUTINE_BROKER_ANSWERS.has(rest.error)) log.info(rest, message);
        else if (level <= KafkaLogLevel.ERROR) log.error(rest, message);
        else log.warn(rest, message);
      },
  });
}

/** Node's TLS options from the validated settings; unset fields keep Node's defaults (its public CAs). */
function tlsOptions(ssl: NonNullable<KafkaConfig['ssl']>): ConnectionOptions {
  return {
    rejectUnauthorized: ssl.verify,
    ...(ssl.ca === null ? {} : { ca: ssl.ca }),
    ...(ssl.cert === null ? {} : { cert: ssl.cert }),
    ...(ssl.key === null ? {} : { key: ssl.key }),
    ...(ssl.keyPassword === null ? {} : { passphrase: ssl.keyPassword }),
    ...(ssl.servername === null ? {} : { servername: ssl.servername }),
  };
}
