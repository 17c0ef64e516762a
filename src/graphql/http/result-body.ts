/**
 * The body of a single GraphQL result over HTTP: Apollo Server sends every result through it (its
 * `stringifyResult`), and the response cache keeps what it makes of an error-free result, so a kept
 * answer's bytes are the sent ones by construction rather than by copying Apollo's serializer. A
 * result the cache keeps is serialized once: the cache asks first ({@link dataBody}), and Apollo's
 * call finds the text made for the same `data`.
 */
import type { FormattedExecutionResult } from 'graphql';
import { stringifyWithText } from '../../domain/json-text.js';

/** Bodies of results with data alone, by their `data` (a result is not changed once executed). */
const bodies = new WeakMap<object, string>();

/** `result` as the JSON text of a response body, with the trailing newline Apollo Server's default adds. */
export function resultBody(result: FormattedExecutionResult): string {
  const { data } = result;
  if (data != null && result.errors === undefined && result.extensions === undefined) {
    const made = bodies.get(data);
    if (made !== undefined) return made;
  }
  // Stored JSON text in the result (a payload) is copied as it is (`domain/json-text.ts`).
  return `${stringifyWithText(result)}\n`;
}

/** The body of a result with `data` alone, kept for the serializer's later call for the same result. */
export function dataBody(data: Record<string, unknown>): string {
  let body = bodies.get(data);
  if (body === undefined) bodies.set(data, (body = `${stringifyWithText({ data })}\n`));
  return body;
}
