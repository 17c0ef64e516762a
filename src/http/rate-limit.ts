/**
 * Rate limits at the HTTP edge: a spent budget is answered with 429 and `Retry-After` (seconds),
 * as a GraphQL error (`extensions.code: RATE_LIMITED`) on /graphql and a problem document elsewhere.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { principalKey } from '../auth/principal.js';
import type { ErrorCode } from '../errors.js';
import { NO_RATE_LIMITS, retryAfterSeconds, type RateLimitBucket, type RateLimits } from '../rate-limits/rate-limits.js';
import { principalOf } from './authenticate.js';
import { sendProblem } from './problem.js';

/** Who a request is counted for. */
export type RateLimitKey = (req: Request, res: Response) => string;

/** The authenticated principal (after `authenticate`): its issuer and subject. */
export const byPrincipal: RateLimitKey = (_req, res) => principalKey(principalOf(res));

/**
 * The client's address as Express sees it under `TRUST_PROXY`: behind a trusted proxy, the client
 * the proxy forwarded for; from any other peer, the peer itself, whatever X-Forwarded-For it sends.
 */
export const byClientIp: RateLimitKey = (req) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Middleware that takes one unit of `bucket` per request, or answers 429. */
export function rateLimit(limits: RateLimits, bucket: RateLimitBucket, keyOf: RateLimitKey): RequestHandler {
  // Limits turned off cost nothing per request: no key, no promise, no extra tick before `next`.
  if (limits === NO_RATE_LIMITS) return (_req, _res, next) => next();
  return async (req: Request, res: Response, next: NextFunction) => {
    let decision;
    try {
      decision = await limits.consume(bucket, keyOf(req, res));
    } catch (error) {
      next(error);
      return;
    }
    if (decision.allowed) {
      next();
      return;
    }
    const seconds = retryAfterSeconds(decision);
    const message = `Too many requests: try again in ${seconds} s.`;
    res.setHeader('Retry-After', String(seconds));
    if (req.baseUrl === '/graphql' || req.path.startsWith('/graphql')) {
      res.status(429).json({ errors: [{ message, extensions: { code: 'RATE_LIMITED' satisfies ErrorCode, retryAfterSeconds: seconds } }] });
      return;
    }
    sendProblem(res, 'RATE_LIMITED', message, { instance: req.originalUrl, members: { retryAfterSeconds: seconds } });
  };
}
