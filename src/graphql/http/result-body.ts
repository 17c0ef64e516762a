/**
 * The body of a single GraphQL result over HTTP: Apollo Server sends every result through it (its
 * `stringifyResult`), and the response cache keeps what it makes of an error-free result, so a kept
 * answer's bytes are the sent ones by construction rather than by copying Apollo's serializer.
 */
import type { FormattedExecutionResult } from 'graphql';

/** `result` as the JSON text of a response body, with the trailing newline Apollo Server's default adds. */
export function resultBody(result: FormattedExecutionResult): string {
  return `${JSON.stringify(result)}\n`;
}
