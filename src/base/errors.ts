/**
 * The one error base class of the service. Every error a client may see carries a stable string
 * `code`; the edges map it to `extensions.code`, an HTTP status or a WebSocket close code.
 */

/** Stable error codes. Clients may switch on these; never rename one. */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  /** A test's input over the size limit (`TEST_INPUT_MAX_BYTES`), on every way of starting one. */
  | 'INPUT_TOO_LARGE'
  /** A test's input nested deeper than `JSON_MAX_DEPTH`, on every way of starting one. */
  | 'INPUT_TOO_DEEP'
  /** A request body over the size the endpoint accepts. */
  | 'PAYLOAD_TOO_LARGE'
  /** An HTTP request refused before any operation (CSRF prevention, a batch, parameters of the wrong type, no document). */
  | 'BAD_REQUEST'
  /** A method /graphql does not serve (graphql-sse's single connection mode reserves its stream with PUT), or a GET of an operation other than a query. */
  | 'METHOD_NOT_ALLOWED'
  /** An `Accept` that takes neither GraphQL response type, for an operation over plain HTTP. */
  | 'NOT_ACCEPTABLE'
  /** A GET to /graphql whose `Content-Type` is not JSON. */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** A valid document whose operation to run is not named (Apollo Server's code, over HTTP). */
  | 'OPERATION_RESOLUTION_FAILURE'
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  /** A WebSocket message that needs an acknowledged connection (a token renewal) arrived before `connection_ack`. */
  | 'NOT_ACKNOWLEDGED'
  | 'FORBIDDEN'
  | 'AUTH_UNAVAILABLE'
  | 'TOO_MANY_SUBSCRIPTIONS'
  | 'RATE_LIMITED'
  | 'NOT_FOUND'
  /**
   * A cursor (`after`, `Last-Event-ID`) names a message its test no longer holds: the test expired,
   * was evicted, was started again, or was held by a replica that is gone. Start over (a fresh
   * subscription, or `messages` from the start) rather than resume.
   */
  | 'CURSOR_EXPIRED'
  /**
   * A followed test left the store while it was followed (no message for the TTL, or evicted to
   * make room): its stream ends with this code, since nothing more will ever come for it. Not
   * worth resuming; read it again with `test` to see that it is gone.
   */
  | 'TEST_EXPIRED'
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
  /** A subscription asked for a delivery guarantee this service does not know. */
  | 'DELIVERY_GUARANTEE_UNSUPPORTED'
  /** A subscription asked for a delivery guarantee this service cannot keep for it. */
  | 'DELIVERY_GUARANTEE_UNSATISFIABLE'
  | 'SHUTTING_DOWN'
  | 'CONFIG_INVALID'
  | 'INTERNAL_SERVER_ERROR';

/**
 * Each code's wire forms, in one place: the HTTP status of an answer that carries it, and the
 * WebSocket close code of a socket it ends. The close codes are graphql-ws's where it has one:
 * 4403 for a refused or expired token (graphql-ws's answer to a refused `connection_init`), 4401
 * before the acknowledgement, 4429 for a spent budget, 4500 for what is the server's fault; 1008
 * for a client that stopped reading and 1001 for a server going away are the WebSocket protocol's.
 * A code that never ends a socket gets 4400 (or 4500 for a server's fault) for completeness.
 */
const WIRE: Record<ErrorCode, { readonly status: number; readonly close: number }> = {
  BAD_USER_INPUT: { status: 400, close: 4400 },
  INPUT_TOO_LARGE: { status: 413, close: 4400 },
  INPUT_TOO_DEEP: { status: 413, close: 4400 },
  PAYLOAD_TOO_LARGE: { status: 413, close: 4400 },
  BAD_REQUEST: { status: 400, close: 4400 },
  METHOD_NOT_ALLOWED: { status: 405, close: 4400 },
  NOT_ACCEPTABLE: { status: 406, close: 4400 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, close: 4400 },
  OPERATION_RESOLUTION_FAILURE: { status: 400, close: 4400 },
  GRAPHQL_PARSE_FAILED: { status: 400, close: 4400 },
  GRAPHQL_VALIDATION_FAILED: { status: 400, close: 4400 },
  UNAUTHENTICATED: { status: 401, close: 4403 },
  NOT_ACKNOWLEDGED: { status: 401, close: 4401 },
  FORBIDDEN: { status: 403, close: 4403 },
  AUTH_UNAVAILABLE: { status: 503, close: 4500 },
  TOO_MANY_SUBSCRIPTIONS: { status: 429, close: 4429 },
  RATE_LIMITED: { status: 429, close: 4429 },
  NOT_FOUND: { status: 404, close: 4400 },
  CURSOR_EXPIRED: { status: 410, close: 4400 },
  TEST_EXPIRED: { status: 410, close: 4400 },
  QUERY_TOO_DEEP: { status: 400, close: 4400 },
  QUERY_TOO_COMPLEX: { status: 400, close: 4400 },
  QUERY_TOO_MANY_ALIASES: { status: 400, close: 4400 },
  QUERY_TOO_MANY_DIRECTIVES: { status: 400, close: 4400 },
  QUERY_TOO_MANY_TOKENS: { status: 400, close: 4400 },
  // The request is understood, but this service runs only the documents of its manifest.
  PERSISTED_QUERY_ONLY: { status: 403, close: 4400 },
  PERSISTED_QUERY_NOT_FOUND: { status: 404, close: 4400 },
  PERSISTED_QUERY_NOT_SUPPORTED: { status: 400, close: 4400 },
  PERSISTED_QUERY_MISMATCH: { status: 400, close: 4400 },
  BROKER_UNAVAILABLE: { status: 503, close: 4500 },
  STORE_UNAVAILABLE: { status: 503, close: 4500 },
  KAFKA_CODEC_FAILED: { status: 503, close: 4500 },
  SUBSCRIBER_TOO_SLOW: { status: 429, close: 1008 },
  DELIVERY_GUARANTEE_UNSUPPORTED: { status: 400, close: 4400 },
  DELIVERY_GUARANTEE_UNSATISFIABLE: { status: 400, close: 4400 },
  SHUTTING_DOWN: { status: 503, close: 1001 },
  CONFIG_INVALID: { status: 500, close: 4500 },
  INTERNAL_SERVER_ERROR: { status: 500, close: 4500 },
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
    return WIRE[this.code].status;
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
  return WIRE[code].status;
}

/** The WebSocket close code for an error code (see the table above). */
export function closeCodeFor(code: ErrorCode): number {
  return WIRE[code].close;
}
