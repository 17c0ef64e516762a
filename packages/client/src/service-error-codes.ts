// Generated from the ErrorCode union of src/base/errors.ts by scripts/client-error-codes.ts
// (`npm run codegen:client-errors`); edit the union, not this file.

/** The service's stable error codes (`extensions.code` of its GraphQL errors): a follow that fails on one reports it. */
export type ServiceErrorCode =
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

/** Every {@link ServiceErrorCode}, in the order the service declares them. */
export const SERVICE_ERROR_CODES: readonly ServiceErrorCode[] = [
  'BAD_USER_INPUT',
  'INPUT_TOO_LARGE',
  'INPUT_TOO_DEEP',
  'PAYLOAD_TOO_LARGE',
  'BAD_REQUEST',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'UNSUPPORTED_MEDIA_TYPE',
  'OPERATION_RESOLUTION_FAILURE',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'UNAUTHENTICATED',
  'NOT_ACKNOWLEDGED',
  'FORBIDDEN',
  'AUTH_UNAVAILABLE',
  'TOO_MANY_SUBSCRIPTIONS',
  'RATE_LIMITED',
  'NOT_FOUND',
  'CURSOR_EXPIRED',
  'TEST_EXPIRED',
  'QUERY_TOO_DEEP',
  'QUERY_TOO_COMPLEX',
  'QUERY_TOO_MANY_ALIASES',
  'QUERY_TOO_MANY_DIRECTIVES',
  'QUERY_TOO_MANY_TOKENS',
  'PERSISTED_QUERY_ONLY',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'PERSISTED_QUERY_MISMATCH',
  'BROKER_UNAVAILABLE',
  'STORE_UNAVAILABLE',
  'KAFKA_CODEC_FAILED',
  'SUBSCRIBER_TOO_SLOW',
  'DELIVERY_GUARANTEE_UNSUPPORTED',
  'DELIVERY_GUARANTEE_UNSATISFIABLE',
  'SHUTTING_DOWN',
  'CONFIG_INVALID',
  'INTERNAL_SERVER_ERROR',
];
