/**
 * The one conversion of a refusal (a ServiceError: a limit, a scope, an unknown persisted
 * document, a socket's budget) to graphql-js's error, for every rule and transport of the
 * pipeline. The GraphQL error keeps the ServiceError as its original error (so the error edge,
 * format-error.ts, knows it was raised on purpose), carries its code and details as extensions,
 * and tells Apollo Server the HTTP status of its code (`extensions.http`, which the edge strips
 * before a client sees it).
 */
import { GraphQLError, type ASTNode } from 'graphql';
import type { ServiceError } from '../../base/errors.js';

/** Where in the document a refusal points, and headers for the HTTP answer. */
export interface RefusalWhere {
  /** The nodes a validation rule refuses (their locations reach the client). */
  readonly nodes?: readonly ASTNode[];
  /** Headers of the HTTP response (a `WWW-Authenticate` challenge). A Map: Apollo Server's HeaderMap is one. */
  readonly headers?: Map<string, string>;
}

/** `error` as a GraphQL error; see the file header. */
export function refusalError(error: ServiceError, where: RefusalWhere = {}): GraphQLError {
  const http = { status: error.httpStatus, ...(where.headers === undefined ? {} : { headers: where.headers }) };
  // Typed loosely: a federation gateway package in the test type graph declares `http.headers` a record.
  const extensions: Record<string, unknown> = { ...error.extensions, http };
  return new GraphQLError(error.message, { nodes: where.nodes ?? null, originalError: error, extensions });
}
