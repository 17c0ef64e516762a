/**
 * The one error base class of the service. Every error a client may see carries a stable string
 * `code`; the edges map it to `extensions.code`, an HTTP status or a WebSocket close code.
 */

/** Stable error codes. Clients may switch on these; never rename one. */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  /** A test's input over the size limit (`TEST_INPUT_MAX_BYTES`), on every way of starting one. */
  | 'INPUT_TOO_LARGE'
  /** A request body over the size the endpoint accepts. */
  | 'PAYLOAD_TOO_LARGE'
  /** A request Apollo Server refuses before any operation (CSRF prevention, a batch, a GET with no query). */
  | 'BAD_REQUEST'
  /** A valid document whose operation to run is not named (Apollo Server's code, over HTTP). */
  | 'OPERATION_RESOLUTION_FAILURE'
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'AUTH_UNAVAILABLE'
  | 'TOO_MANY_SUBSCRIPTIONS'
  | 'RATE_LIMITED'
  | 'NOT_FOUND'
  | 'QUERY_TOO_DEEP'
  | 'QUERY_TOO_COMPLEX'
  | 'QUERY_TOO_MANY_ALIASES'
  | 'QUERY_TOO_MANY_DIRECTIVES'
  | 'QUERY_TOO_MANY_TOKENS'
  | 'PERSISTED_QUERY_ONLY'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_SUPPORTED'
  | 'PERSISTED_QUERY_MISMATCH'
  | 'BROKER_UNAVAILABLE'
  | 'STORE_UNAVAILABLE'
  | 'KAFKA_CODEC_FAILED'
  | 'SUBSCRIBER_TOO_SLOW'
  | 'SHUTTING_DOWN'
  | 'CONFIG_INVALID'
  | 'INTERNAL_SERVER_ERROR';

const HTTP_STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  INPUT_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  BAD_REQUEST: 400,
  OPERATION_RESOLUTION_FAILURE: 400,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  AUTH_UNAVAILABLE: 503,
  TOO_MANY_SUBSCRIPTIONS: 429,
  RATE_LIMITED: 429,
  NOT_FOUND: 404,
  QUERY_TOO_DEEP: 400,
  QUERY_TOO_COMPLEX: 400,
  QUERY_TOO_MANY_ALIASES: 400,
  QUERY_TOO_MANY_DIRECTIVES: 400,
  QUERY_TOO_MANY_TOKENS: 400,
  // The request is understood, but this service runs only the documents of its manifest.
  PERSISTED_QUERY_ONLY: 403,
  PERSISTED_QUERY_NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_SUPPORTED: 400,
  PERSISTED_QUERY_MISMATCH: 400,
  BROKER_UNAVAILABLE: 503,
  STORE_UNAVAILABLE: 503,
  KAFKA_CODEC_FAILED: 503,
  SUBSCRIBER_TOO_SLOW: 429,
  SHUTTING_DOWN: 503,
  CONFIG_INVALID: 500,
  INTERNAL_SERVER_ERROR: 500,
};

/** Base class of every error the service raises on purpose. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  /** Extra fields safe to show to clients (never secrets or internals). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.details = options?.details;
  }

  /**
   * GraphQL copies `extensions` of an error's original error into the response, so a ServiceError
   * thrown anywhere under a resolver (or by a subscription stream) reaches clients with its code.
   */
  get extensions(): Record<string, unknown> {
    return { ...this.details, code: this.code };
  }

  /** The HTTP status this error maps to at the HTTP edge. */
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}

/** Startup configuration is invalid; the message names the environment variable. */
export class ConfigError extends ServiceError {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super('CONFIG_INVALID', `${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** True for errors raised on purpose by the service (safe to show). */
export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof ServiceError;
}

/** One error as GraphQL sends it: `{ message, extensions }`, with the code among the extensions. */
export interface GraphQLErrorJson {
  readonly message: string;
  readonly extensions: Record<string, unknown>;
}

/**
 * The body of a GraphQL response that carries only `error`: what the HTTP guards of /graphql (a
 * refused token, a spent budget) and a refused event stream answer, in the shape GraphQL clients
 * parse, with the extensions a GraphQL error of it would carry.
 */
export function graphQLErrorBody(error: ServiceError): { readonly errors: readonly [GraphQLErrorJson] } {
  return { errors: [{ message: error.message, extensions: error.extensions }] };
}

/** The HTTP status for an error code. */
export function httpStatusFor(code: ErrorCode): number {
  return HTTP_STATUS[code];
}
