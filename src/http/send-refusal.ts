/**
 * The HTTP edge of a refusal (a ServiceError answered before any route's own work: a refused token,
 * a spent budget), in one place for every guard: on /graphql the GraphQL error body its clients
 * parse, elsewhere an RFC 9457 problem document with the error's details as members; the status,
 * in both, is the code's.
 */
import type { Request, Response } from 'express';
import { graphQLErrorBody, type ServiceError } from '../base/errors.js';
import { sendProblem } from './problem.js';

/** Sends `error` in the shape the route's clients expect. */
export function sendRefusal(req: Request, res: Response, error: ServiceError): void {
  if (isGraphQLRoute(req)) {
    res.status(error.httpStatus).json(graphQLErrorBody(error));
    return;
  }
  sendProblem(res, error.code, error.message, { instance: req.originalUrl, members: problemMembers(error) });
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
