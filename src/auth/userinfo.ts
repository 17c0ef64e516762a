/**
 * The issuer's `/userinfo` endpoint (OIDC Core 5.3), answered with the same verifier as the API:
 * oidc-provider's own refuses the JWT access tokens issued for this API. Failures are answered as
 * OIDC Core 5.3.3 asks, the RFC 6750 way: a `WWW-Authenticate` challenge and an OAuth error body.
 */
import type { Request, RequestHandler, Response } from 'express';
import { isServiceError, type ServiceError } from '../base/errors.js';
import type { VerifyAccessToken } from './principal.js';
import { bearerChallenge, InvalidTokenError } from './auth-error.js';
import { bearerToken } from './bearer.js';
import type { UserEntry } from './credentials.js';

/** OAuth error names of the service's auth failures (RFC 6750 section 3.1). */
const OAUTH_ERRORS: Partial<Record<ServiceError['code'], string>> = {
  UNAUTHENTICATED: 'invalid_token',
  FORBIDDEN: 'insufficient_scope',
  AUTH_UNAVAILABLE: 'temporarily_unavailable',
};

/** The `/userinfo` handler over the configured users. */
export function userinfoHandler(options: { verifyAccessToken: VerifyAccessToken; usersBySub: ReadonlyMap<string, UserEntry> }): RequestHandler {
  return async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    try {
      const principal = await options.verifyAccessToken(bearerToken(req.headers.authorization));
      const user = options.usersBySub.get(principal.subject);
      // Answered below like any refused token (one challenge, one body).
      if (user === undefined) throw new InvalidTokenError('the token does not belong to a user');
      res.json({ sub: user.sub, ...(user.name ? { name: user.name } : {}), ...(user.email ? { email: user.email } : {}) });
    } catch (error) {
      if (!isServiceError(error)) throw error;
      const challenge = bearerChallenge(error);
      if (challenge !== undefined) res.setHeader('WWW-Authenticate', challenge);
      res.status(error.httpStatus).json({ error: OAUTH_ERRORS[error.code] ?? 'server_error', error_description: error.message, code: error.code });
    }
  };
}
