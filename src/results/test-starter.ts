/**
 * Starting a test: the one operation that writes. Shared by the GraphQL mutation and `POST /tests`.
 */
import { randomUUID } from 'node:crypto';
import type { StartTestResult } from '../domain/types.js';
import type { RequestPublisher } from '../ingest/request-publisher.js';
import type { Logger } from '../base/logger.js';
import type { ResultLog } from '../log/result-log.js';
import { checkInputSize } from './input-size.js';

/** Starts tests. */
export interface TestStarter {
  /**
   * Refuses an input over the size limit (INPUT_TOO_LARGE); generates the correlation id, records the test (readable at once, with no messages), and hands
   * the request to the external system. When the broker does not take it, the record is removed
   * and the BROKER_UNAVAILABLE error is rethrown, so no test appears started that was never sent.
   */
  start(input: unknown, owner: string): Promise<StartTestResult>;
  /** Largest input it accepts (its JSON, in bytes). */
  readonly maxInputBytes: number;
}

/** Creates the {@link TestStarter}. */
export function createTestStarter(options: {
  log: ResultLog;
  publisher: RequestPublisher;
  logger: Logger;
  /** Largest input (its JSON, in bytes); larger is refused with INPUT_TOO_LARGE. */
  maxInputBytes: number;
}): TestStarter {
  return {
    maxInputBytes: options.maxInputBytes,
    async start(input, owner) {
      checkInputSize(input, options.maxInputBytes);
      const correlationId = randomUUID();
      const test = await options.log.create({ correlationId, input: input ?? null, owner });
      try {
        // The request's time is the test's createdAt: replicas that learn the test from the
        // request (the replicated mode) list it at the same place as this one.
        await options.publisher.publish({ correlationId, input: input ?? null, owner, requestedAt: test.createdAt });
      } catch (error) {
        await options.log.remove(correlationId).catch((removeError: unknown) => {
          options.logger.error({ err: removeError, correlationId }, 'could not remove the record of an unsent test');
        });
        throw error;
      }
      options.logger.info({ correlationId, owner }, 'test started');
      return { correlationId, test };
    },
  };
}
