/**
 * The GraphQL error edge: errors the service raised on purpose, and client errors found by
 * parsing, validation and coercion, keep their message and `extensions.code`; anything else is
 * logged and masked. Stack traces (and the file paths in them and in unexpected messages) reach
 * clients only when `debug` asks for them (GRAPHQL_DEBUG_ERRORS), in any environment.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ServiceError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';

/** Formats one error for clients. */
export type ErrorFormatter = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/** Creates the formatter shared by Apollo (`formatError`) and the WebSocket server. */
export function createErrorFormatter(options: { logger: Logger; debug?: boolean }): ErrorFormatter {
  const debug = options.debug ?? false;
  return (formatted, error) => {
    // The GraphQL server may have added `stacktrace` already (Apollo does outside production).
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    const shown: GraphQLFormattedError = debug ? formatted : { ...formatted, ...(formatted.extensions ? { extensions } : {}) };
    if (!isUnexpected(error)) return shown;
    options.logger.error({ err: error instanceof GraphQLError ? (error.originalError ?? error) : error, path: formatted.path }, 'unexpected error in a GraphQL operation');
    if (debug) return { ...shown, extensions: { ...shown.extensions, code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode } };
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
