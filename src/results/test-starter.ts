/**
 * Starting a test: the one operation that writes. Shared by the GraphQL mutation and `POST /tests`.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ServiceError } from '../base/errors.js';
import type { StartTestResult } from '../domain/types.js';
import type { RequestPublisher } from '../ingest/request-publisher.js';
import type { Logger } from '../base/logger.js';
import type { ResultStore } from '../log/result-log.js';
import { DEFAULT_JSON_SHAPE, type JsonShapeLimits } from '../base/json-shape.js';
import { checkInput } from './input-size.js';
import { canonicalCorrelationId, isUuid } from '../domain/correlation-id.js';

/** Starts tests. */
export interface TestStarter {
  /**
   * Refuses an input over the size limit (INPUT_TOO_LARGE); records the test (readable at once,
   * with no messages) under a generated correlation id, or under `correlationId` when the caller
   * gives one, and hands the request to the external system.
   *
   * With a generated id, a request the broker does not take is taken back: the record is removed
   * and BROKER_UNAVAILABLE rethrown. With the caller's id the start is a retry-safe one: the same id
   * again (same owner, same input) answers the test already recorded and sends its request again
   * under the same id (results are deduplicated by their keys, so an external system that runs a
   * request once per id, or gives a second run's results the same keys, leaves each stored once),
   * and a failed send keeps the record, since the request may have gone out
   * (a timeout is no proof it did not) and the caller is to retry with the same id.
   */
  start(input: unknown, owner: string, correlationId?: string): Promise<StartTestResult>;
  /** Largest input it accepts (its JSON, in bytes). */
  readonly maxInputBytes: number;
}

/** Creates the {@link TestStarter}. */
export function createTestStarter(options: {
  log: ResultStore;
  publisher: RequestPublisher;
  logger: Logger;
  /** Largest input (its JSON, in bytes); larger is refused with INPUT_TOO_LARGE. */
  maxInputBytes: number;
  /** Shape limits of the input (depth, members, items, string length); past them it is refused. */
  jsonShape?: JsonShapeLimits;
}): TestStarter {
  const shape = options.jsonShape ?? DEFAULT_JSON_SHAPE;
  /** Refuses the caller's id unless it is a UUID that is free, or names this owner's test started with this input. */
  const claim = async (correlationId: string, input: unknown, owner: string) => {
    // A correlation id a caller may choose: a UUID (any version), so that ids stay unguessable and alike.
    if (!isUuid(correlationId)) throw new ServiceError('BAD_USER_INPUT', 'correlationId must be a UUID.', { details: { argument: 'correlationId' } });
    const [existing] = await options.log.getMany([correlationId]);
    if (existing === null || existing === undefined) return;
    // Another's, or seen only through its results (not to be claimed): taken either way, and said alike.
    if (existing.owner !== owner) {
      throw new ServiceError('BAD_USER_INPUT', 'This correlationId is taken: choose another.', { details: { argument: 'correlationId' } });
    }
    // As JSON: a stored input comes back from its JSON (Redis), a GraphQL one has no prototype.
    if (!isDeepStrictEqual(asJson(existing.input), asJson(input))) {
      throw new ServiceError('BAD_USER_INPUT', 'A test was started with this correlationId and another input.', { details: { argument: 'correlationId' } });
    }
  };
  return {
    maxInputBytes: options.maxInputBytes,
    async start(input, owner, spelled) {
      // Either case names one test: the id is claimed, stored and published lower-cased.
      const chosen = spelled === undefined ? undefined : canonicalCorrelationId(spelled);
      checkInput(input, options.maxInputBytes, shape);
      const value = input ?? null;
      if (chosen !== undefined) await claim(chosen, value, owner);
      const correlationId = chosen ?? randomUUID();
      // Creating is idempotent: a test recorded already is answered as it is.
      const test = await options.log.create({ correlationId, input: value, owner });
      try {
        // The request's time is the test's createdAt: replicas that learn the test from the
        // request (the replicated mode) list it at the same place as this one.
        await options.publisher.publish({ correlationId, input: value, owner, requestedAt: test.createdAt });
      } catch (error) {
        if (chosen === undefined) {
          await options.log.remove(correlationId).catch((removeError: unknown) => {
            options.logger.error({ err: removeError, correlationId }, 'could not remove the record of an unsent test');
          });
        }
        throw error;
      }
      options.logger.info({ correlationId, owner }, 'test started');
      return { correlationId, test };
    },
  };
}

const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null)) as unknown;
