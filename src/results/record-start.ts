/**
 * What the replicated mode's requests consumer does with each batch of start requests: record
 * every test it names, with its owner, input and start time, so that each replica knows who
 * started a test wherever it was started. Creating is idempotent: the replica that started the
 * test, or a request read again after a restart, changes nothing, and a test whose results came
 * first is filled in (see ResultStore.create).
 */
import type { StartRequestHandler } from '../ingest/request-consumer.js';
import type { Logger } from '../base/logger.js';
import type { ResultStore } from '../log/result-log.js';
import { DEFAULT_JSON_SHAPE, jsonShapeFault, type JsonShapeLimits } from '../base/json-shape.js';
import { inputBytes } from './input-size.js';

/**
 * Creates the requests consumer's `onRequests` handler. A request whose input is over the limit was
 * not written by this service (it refuses such a start): it is logged and not recorded.
 */
export function createStartRecorder(options: { log: ResultStore; maxInputBytes: number; jsonShape?: JsonShapeLimits; logger: Logger }): StartRequestHandler {
  const { log } = options;
  const shape = options.jsonShape ?? DEFAULT_JSON_SHAPE;
  return async (requests) => {
    // One at a time, in the order read: a request read twice in one batch is then a no-op.
    for (const request of requests) {
      // The shape first: counting the bytes of a value nested too deep would overflow the stack.
      const fault = jsonShapeFault(request.input, shape);
      if (fault !== undefined) {
        options.logger.warn(
          { correlationId: request.correlationId, limit: fault.limit },
          'skipped a start request whose input is past the JSON_MAX_* shape limits',
        );
        continue;
      }
      const bytes = inputBytes(request.input);
      if (bytes > options.maxInputBytes) {
        options.logger.warn(
          { correlationId: request.correlationId, bytes, maxBytes: options.maxInputBytes },
          'skipped a start request whose input is over TEST_INPUT_MAX_BYTES',
        );
        continue;
      }
      await log.create({ correlationId: request.correlationId, input: request.input, owner: request.owner, createdAt: request.requestedAt });
    }
  };
}
