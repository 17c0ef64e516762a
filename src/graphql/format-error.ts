/**
 * The GraphQL error edge: errors the service raised on purpose, and client errors found by
 * parsing, validation and coercion, keep their message and `extensions.code`; anything else is
 * logged (by the pipeline, once) and masked. Stack traces (and the file paths in them and in
 * unexpected messages) reach clients only when `debug` asks for them (GRAPHQL_DEBUG_ERRORS), in
 * any environment. A masked error carries the request id (`extensions.requestId`) its log line has.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ServiceError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { currentRequestId, withRequestId } from '../request-id.js';

/** Replaces an unexpected error by one safe to show; returns expected errors unchanged. */
export type MaskError = (error: unknown) => Error;

/** Creates the pipeline's error masker (Yoga's `maskedErrors.maskError`), shared by both transports. */
export function createErrorMasker(options: { debug: boolean }): MaskError {
  return (error) => {
    if (!isUnexpected(error)) return error as Error;
    const graphqlError = error instanceof GraphQLError ? error : undefined;
    const cause = graphqlError?.originalError ?? error;
    const requestId = currentRequestId();
    const message = options.debug ? (cause instanceof Error ? cause.message : String(cause)) : 'Internal server error';
    return new GraphQLError(message, {
      ...(graphqlError?.nodes ? { nodes: graphqlError.nodes } : {}),
      ...(graphqlError?.path ? { path: graphqlError.path } : {}),
      // `unexpected` (never sent) makes a request that failed outright answer 500 over HTTP.
      extensions: {
        code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode,
        unexpected: true,
        ...(requestId === undefined ? {} : { requestId }),
        ...(options.debug && cause instanceof Error && cause.stack !== undefined ? { stacktrace: cause.stack.split('\n') } : {}),
      },
    });
  };
}

/**
 * Any error as a GraphQL error, keeping it as the original error (so the masker sees what it was)
 * and a ServiceError's code; masked later, where the operation's request id is known, if unexpected.
 */
export function asGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  if (error instanceof ServiceError) return new GraphQLError(error.message, { originalError: error, extensions: error.extensions });
  return new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error instanceof Error ? error : undefined });
}

/** True for errors nobody raised on purpose: a bug or a failing dependency. */
export function isUnexpected(error: unknown): boolean {
  if (error instanceof ServiceError) return false;
  if (!(error instanceof GraphQLError)) return true;
  const original = error.originalError;
  // No original error: raised by parsing, validation or coercion (a client error), or by us.
  if (original === undefined || original === null) return false;
  return isUnexpected(original);
}

/**
 * An error as sent to clients outside HTTP (graphql-ws): without the pipeline's internal
 * extensions (`http`, which carries HTTP statuses and headers, and `unexpected`).
 */
export function toClientError(error: GraphQLError): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (formatted.extensions === undefined) return formatted;
  const { http: _http, unexpected: _unexpected, ...extensions } = formatted.extensions;
  return { ...formatted, extensions };
}

/**
 * Errors as a streaming transport (graphql-ws, SSE) sends them: masked with the pipeline's masker
 * under the operation's request id (the unexpected ones logged with it, as the HTTP edge does),
 * and without the pipeline's internal extensions.
 */
export function clientErrors(errors: readonly GraphQLError[], requestId: string, maskError: MaskError, log: Logger): GraphQLFormattedError[] {
  return errors.map((error) => {
    const masked = withRequestId(requestId, () => maskError(error));
    if (masked !== error) log.error({ err: error.originalError ?? error, requestId }, 'unexpected error in a GraphQL operation');
    return toClientError(masked instanceof GraphQLError ? masked : new GraphQLError(masked.message));
  });
}
