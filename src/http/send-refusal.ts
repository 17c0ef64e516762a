/**
 * The HTTP edge of a refusal (a ServiceError answered before any route's own work: a refused token,
 * a spent budget, a body that does not parse), in one place for every guard: on /graphql the GraphQL
 * error body its clients parse, in the GraphQL response type the request's `Accept` prefers (as
 * Apollo Server answers its own refusals: Apollo Client 4 reads the code of a 401 only in
 * `application/graphql-response+json`), elsewhere an RFC 9457 problem document with the error's
 * details as members; the status, in both, is the code's unless the caller names another, and
 * Express gives it its reason phrase.
 */
import type { Request, Response } from 'express';
import { graphQLErrorBody, type ServiceError } from '../base/errors.js';
import { graphQLResponseType } from '../base/graphql-response-type.js';
import { sendProblem } from './problem.js';

/** Sends `error` in the shape the route's clients expect, with `status` (the code's by default). */
export function sendRefusal(req: Request, res: Response, error: ServiceError, status = error.httpStatus): void {
  if (isGraphQLRoute(req)) {
    res
      .status(status)
      .type(graphQLResponseType((types) => req.accepts(types)))
      .json(graphQLErrorBody(error));
    return;
  }
  sendProblem(res, error.code, error.message, { status, instance: req.originalUrl, members: problemMembers(error) });
}

/** A ServiceError's details that a problem document can carry as members (a limit, an argument's name). */
export function problemMembers(error: ServiceError): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries(error.details ?? {}).filter((entry): entry is [string, string | number] => typeof entry[1] === 'string' || typeof entry[1] === 'number'),
  );
}

/** True on the GraphQL endpoint, wherever the guard is mounted (on the path, or on the app). */
function isGraphQLRoute(req: Request): boolean {
  return req.baseUrl === '/graphql' || req.path.startsWith('/graphql');
}
