/**
 * The one limit on a test's input, whichever way the test is started (`startTest`, `POST /tests`,
 * or a start request read back in the replicated mode): the input is stored with the test, returned
 * by every read and sent to the external system, so its size is bounded where it enters.
 */
import { ServiceError } from '../base/errors.js';

/** The size of `input` as the service stores and sends it: its JSON text, in UTF-8 bytes. */
export function inputBytes(input: unknown): number {
  return Buffer.byteLength(JSON.stringify(input ?? null) ?? 'null');
}

/** Throws INPUT_TOO_LARGE when `input` is larger than `maxBytes`. */
export function checkInputSize(input: unknown, maxBytes: number): void {
  const bytes = inputBytes(input);
  if (bytes > maxBytes) {
    throw new ServiceError('INPUT_TOO_LARGE', `The test's input is ${bytes} bytes of JSON; at most ${maxBytes} are accepted.`, { details: { maxBytes } });
  }
}
