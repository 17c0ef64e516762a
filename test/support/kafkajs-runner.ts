/**
 * kafkajs's own consumer runner over a consumer group stub, for the tests of the workarounds that
 * replace a method of it (`src/ingest/kafkajs-*.ts`): silent, not committing by itself, one batch
 * at a time, with the retry settings a test gives.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** What these tests use of kafkajs's `Runner`. */
export interface KafkaRunner {
  running: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  commitOffsets(offsets: unknown): Promise<void> | undefined;
}

/** A kafkajs runner over `consumerGroup` (a stub of kafkajs's `ConsumerGroup`), retrying as `retry` says. */
export function kafkajsRunner(consumerGroup: object, retry: Record<string, number>): KafkaRunner {
  const Runner = require('kafkajs/src/consumer/runner.js') as new (options: Record<string, unknown>) => KafkaRunner;
  const { createLogger, LEVELS } = require('kafkajs/src/loggers/index.js') as {
    createLogger(options: { level: number; logCreator: () => () => void }): unknown;
    LEVELS: { NOTHING: number };
  };
  const InstrumentationEmitter = require('kafkajs/src/instrumentation/emitter.js') as new () => unknown;
  return new Runner({
    logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }),
    consumerGroup,
    instrumentationEmitter: new InstrumentationEmitter(),
    eachBatchAutoResolve: false,
    eachBatch: async () => undefined,
    heartbeatInterval: 1_000,
    retry,
    onCrash: () => undefined,
    autoCommit: false,
    concurrency: 1,
  });
}
