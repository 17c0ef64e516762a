/**
 * Bearer authentication of HTTP requests (RFC 6750): the verified principal goes to
 * `res.locals.principal`; a missing or refused token is answered here with 401 and a
 * `WWW-Authenticate` challenge, as a GraphQL error body on /graphql and a problem document elsewhere.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bearerChallenge } from '../auth/auth-error.js';
import { bearerToken } from '../auth/bearer.js';
import type { Principal, VerifyAccessToken } from '../auth/principal.js';
import { isServiceError, type ServiceError } from '../base/errors.js';
import { sendRefusal } from './send-refusal.js';

/** The principal of an authenticated request. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (principal === undefined) throw new Error('route is missing the authenticate middleware');
  return principal;
}

/** Sends an auth failure in the shape the route's clients expect. */
export function sendAuthError(req: Request, res: Response, error: ServiceError): void {
  const challenge = bearerChallenge(error);
  if (challenge !== undefined) res.setHeader('WWW-Authenticate', challenge);
  sendRefusal(req, res, error);
}

/** Middleware that requires a valid bearer token. */
export function authenticate(verify: VerifyAccessToken): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.principal = await verify(bearerToken(req.headers.authorization));
    } catch (error) {
      if (!isServiceError(error)) return next(error);
      sendAuthError(req, res, error);
      return;
    }
    next();
  };
}
