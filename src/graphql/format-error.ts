/**
 * The GraphQL error edge: errors the service raised on purpose, and client errors found by
 * parsing, validation and coercion, keep their message and `extensions.code`; anything else is
 * logged and, in production, masked.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ServiceError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';

/** Formats one error for clients. */
export type ErrorFormatter = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/** Creates the formatter shared by Apollo (`formatError`) and the WebSocket server. */
export function createErrorFormatter(options: { production: boolean; logger: Logger }): ErrorFormatter {
  return (formatted, error) => {
    if (!isUnexpected(error)) return formatted;
    options.logger.error({ err: error instanceof GraphQLError ? (error.originalError ?? error) : error, path: formatted.path }, 'unexpected error in a GraphQL operation');
    if (!options.production) return { ...formatted, extensions: { ...formatted.extensions, code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode } };
    return {
      message: 'Internal server error',
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode },
    };
  };
}

/** True for errors nobody raised on purpose: a bug or a failing dependency. */
function isUnexpected(error: unknown): boolean {
  if (error instanceof ServiceError) return false;
  if (!(error instanceof GraphQLError)) return true;
  const original = error.originalError;
  // No original error: raised by parsing, validation or coercion (a client error), or by us.
  if (original === undefined || original === null) return false;
  return isUnexpected(original);
}
