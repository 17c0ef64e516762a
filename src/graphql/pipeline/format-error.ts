/**
 * The GraphQL error edge of every transport, in one function ({@link FormatError}, Apollo Server's
 * `formatError`, which the graphql-ws and graphql-sse bindings call too):
 *
 * - errors the service raised on purpose, and client errors found by parsing, validation and
 *   coercion, keep their message and `extensions.code`; a client error graphql-js raised without a
 *   code (a variable or an argument the client's variables made invalid) gets BAD_USER_INPUT, never
 *   none and never Apollo Server's default INTERNAL_SERVER_ERROR; a rule's own code (QUERY_TOO_MANY_ALIASES,
 *   QUERY_TOO_DEEP, …) is restored where Apollo Server wrapped it in GRAPHQL_VALIDATION_FAILED, and
 *   graphql-js's token-limit syntax error becomes QUERY_TOO_MANY_TOKENS, so every transport answers alike;
 * - anything else is logged once and masked, carrying the request id (`extensions.requestId`) of
 *   its log line;
 * - the pipeline's internal extensions (`http`, the status and headers of a refusal) never leave.
 *
 * Stack traces (and the file paths in them and in unexpected messages) reach clients only when
 * `debug` asks for them (GRAPHQL_DEBUG_ERRORS), in any environment.
 */
import { GraphQLError, isValueNode, type GraphQLFormattedError } from 'graphql';
import { ServiceError, type ErrorCode } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { currentRequestId, withRequestId } from '../../base/request-id.js';
import { tokenLimitRefusal } from './plugins/shape-limits.js';
import { refusalError } from './refusal-error.js';

/** An error as sent to clients: Apollo Server's `formatError` signature. */
export type FormatError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/** Creates the error edge; `logger` gets every unexpected error, once. */
export function createErrorFormatter(options: { debug: boolean; logger: Logger }): FormatError {
  const log = options.logger.child({ component: 'graphql' });
  return (formatted, error) => {
    if (isUnexpected(error)) return masked(formatted, error, options.debug, log);
    const extensions: Record<string, unknown> = { ...formatted.extensions, ...ruleExtensions(error), ...uncodedInput(error) };
    delete extensions.http;
    const tokens = tokenLimitRefusal(formatted);
    if (tokens !== undefined) return { ...formatted, message: tokens.message, extensions: { ...extensions, ...tokens.extensions } };
    return { ...formatted, extensions };
  };
}

/** The unexpected error as a client sees it, after its log line. */
function masked(formatted: GraphQLFormattedError, error: unknown, debug: boolean, log: Logger): GraphQLFormattedError {
  const cause = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const requestId = currentRequestId();
  log.error({ err: cause, requestId, ...(formatted.path ? { path: formatted.path } : {}) }, 'unexpected error in a GraphQL operation');
  const { message: _message, extensions: _extensions, ...where } = formatted;
  return {
    message: debug ? (cause instanceof Error ? cause.message : String(cause)) : 'Internal server error',
    ...where,
    extensions: {
      code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode,
      ...(requestId === undefined ? {} : { requestId }),
      ...(debug && cause instanceof Error && cause.stack !== undefined ? { stacktrace: cause.stack.split('\n') } : {}),
    },
  };
}

/**
 * The extensions of the rule that refused a document, where Apollo Server wrapped its error in
 * one of its own: a validation error keeps the rule's refusal (refusal-error.ts) as its original
 * error, or the ServiceError behind it.
 */
function ruleExtensions(error: unknown): Record<string, unknown> | undefined {
  if (!(error instanceof GraphQLError)) return undefined;
  const original = error.originalError;
  if (original instanceof ServiceError) return original.extensions;
  if (!(original instanceof GraphQLError) || typeof original.extensions.code !== 'string') return undefined;
  return original.extensions;
}

/**
 * BAD_USER_INPUT for a client error that has no code of its own: graphql-js raises variable and
 * argument coercion errors bare (Apollo Server codes the first kind only, and only over HTTP).
 */
function uncodedInput(error: unknown): { code: ErrorCode } | undefined {
  if (!(error instanceof GraphQLError) || typeof error.extensions.code === 'string') return undefined;
  const original = error.originalError;
  if (original instanceof ServiceError || (original instanceof GraphQLError && typeof original.extensions.code === 'string')) return undefined;
  return { code: 'BAD_USER_INPUT' };
}

/**
 * Any error as a GraphQL error, keeping it as the original error (so the edge sees what it was)
 * and a ServiceError's code; masked later, where the operation's request id is known, if unexpected.
 */
export function asGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  if (error instanceof ServiceError) return refusalError(error);
  return new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error instanceof Error ? error : undefined });
}

/** True for errors nobody raised on purpose: a bug or a failing dependency. */
export function isUnexpected(error: unknown): boolean {
  if (error instanceof ServiceError) return false;
  if (!(error instanceof GraphQLError)) return true;
  const original = error.originalError;
  // No original error: raised by parsing, validation or coercion (a client error), or by us.
  if (original === undefined || original === null) return false;
  if (error.path !== undefined && isBareGraphQLError(original)) return !atArgumentValue(original);
  return isUnexpected(original);
}

/** A GraphQL error graphql-js raised itself: no code, no cause. */
function isBareGraphQLError(error: Error): error is GraphQLError {
  return error instanceof GraphQLError && error.originalError == null && error.extensions.code === undefined;
}

/**
 * True when graphql-js located a field's error at an argument's value: an argument the client's
 * variables made invalid (null for a non-null argument, a variable never given, a list holding
 * one). Its other bare errors during execution have no location of their own: a value the service
 * could not serialize, a bug.
 */
function atArgumentValue(error: GraphQLError): boolean {
  const node = error.nodes?.[0];
  return node !== undefined && isValueNode(node);
}

/**
 * Errors as a streaming transport (graphql-ws, SSE) sends them: through the same edge, under the
 * operation's request id.
 */
export function clientErrors(errors: readonly GraphQLError[], requestId: string, formatError: FormatError): GraphQLFormattedError[] {
  return withRequestId(requestId, () => errors.map((error) => formatError(error.toJSON(), error)));
}
