/**
 * The issuer's `/userinfo` endpoint (OIDC Core 5.3), answered with the same verifier as the API:
 * oidc-provider's own refuses the JWT access tokens issued for this API. A client may ask with GET
 * or POST (5.3.1), and on a POST send the token in a form body's `access_token` instead of the
 * `Authorization` header (RFC 6750 section 2.2; both at once are refused, as section 2 asks).
 * Failures are answered as OIDC Core 5.3.3 asks, the RFC 6750 way: a `WWW-Authenticate` challenge
 * and an OAuth error body.
 */
import type { Request, RequestHandler, Response } from 'express';
import { isServiceError, ServiceError } from '../base/errors.js';
import type { VerifyAccessToken } from './principal.js';
import { bearerChallenge, InvalidTokenError } from './auth-error.js';
import { bearerToken } from './bearer.js';
import type { UserEntry } from './credentials.js';

/** OAuth error names of the service's auth failures (RFC 6750 section 3.1). */
const OAUTH_ERRORS: Partial<Record<ServiceError['code'], string>> = {
  UNAUTHENTICATED: 'invalid_token',
  FORBIDDEN: 'insufficient_scope',
  AUTH_UNAVAILABLE: 'temporarily_unavailable',
  BAD_REQUEST: 'invalid_request',
};

/** The `/userinfo` handler over the configured users. */
export function userinfoHandler(options: { verifyAccessToken: VerifyAccessToken; usersBySub: ReadonlyMap<string, UserEntry> }): RequestHandler {
  return async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    try {
      const principal = await options.verifyAccessToken(presentedToken(req));
      const user = options.usersBySub.get(principal.subject);
      // Answered below like any refused token (one challenge, one body).
      if (user === undefined) throw new InvalidTokenError('the token does not belong to a user');
      res.json({ sub: user.sub, ...(user.name ? { name: user.name } : {}), ...(user.email ? { email: user.email } : {}) });
    } catch (error) {
      if (!isServiceError(error)) throw error;
      // RFC 6750 section 3: a request that is not one is answered with the challenge's invalid_request.
      const challenge = error.code === 'BAD_REQUEST' ? `Bearer error="invalid_request", error_description="${error.message}"` : bearerChallenge(error);
      if (challenge !== undefined) res.setHeader('WWW-Authenticate', challenge);
      res.status(error.httpStatus).json({ error: OAUTH_ERRORS[error.code] ?? 'server_error', error_description: error.message, code: error.code });
    }
  };
}

/** The token of a request: its `Authorization` header's, or a form-encoded POST body's `access_token`. */
function presentedToken(req: Request): string {
  const body: unknown = req.body;
  const form = req.method === 'POST' && typeof body === 'object' && body !== null && 'access_token' in body ? body.access_token : undefined;
  if (form === undefined) return bearerToken(req.headers.authorization);
  if (req.headers.authorization !== undefined)
    throw new ServiceError('BAD_REQUEST', 'Send the access token once: in the Authorization header or as access_token, not both.');
  if (Array.isArray(form)) throw new ServiceError('BAD_REQUEST', 'Send the access token once: access_token is given more than once.');
  if (typeof form !== 'string' || form === '') throw new InvalidTokenError('the access_token parameter holds no token');
  return form;
}
