/**
 * The one check of a test's input, whichever way the test is started (`startTest`, `POST /tests`,
 * or a start request read back in the replicated mode): the input is stored with the test, returned
 * by every read and sent to the external system, so its size and shape are bounded where it enters.
 */
import { ServiceError } from '../base/errors.js';
import { jsonShapeFault, type JsonShapeLimits } from '../base/json-shape.js';

/** The size of `input` as the service stores and sends it: its JSON text, in UTF-8 bytes. */
export function inputBytes(input: unknown): number {
  return Buffer.byteLength(JSON.stringify(input ?? null) ?? 'null');
}

/**
 * Throws INPUT_TOO_DEEP when `input` is nested past `shape.maxDepth`, INPUT_TOO_LARGE when it
 * passes another shape limit or is larger than `maxBytes`. The shape comes first: serializing a
 * value nested tens of thousands deep to count its bytes would overflow the stack.
 */
export function checkInput(input: unknown, maxBytes: number, shape: JsonShapeLimits): void {
  const fault = jsonShapeFault(input, shape);
  if (fault !== undefined) {
    const code = fault.limit === 'depth' ? 'INPUT_TOO_DEEP' : 'INPUT_TOO_LARGE';
    throw new ServiceError(code, `The test's input is ${fault.reason}.`, { details: { limit: fault.limit } });
  }
  const bytes = inputBytes(input);
  if (bytes > maxBytes) {
    throw new ServiceError('INPUT_TOO_LARGE', `The test's input is ${bytes} bytes of JSON; at most ${maxBytes} are accepted.`, { details: { maxBytes } });
  }
}
