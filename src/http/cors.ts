/**
 * CORS for the API routes: pages on the listed origins may call them with a bearer token. A
 * preflight is answered here, before authentication (browsers never send credentials on it);
 * other origins get no CORS header at all, so their browsers block the response.
 */
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

/** Creates the CORS middleware for `allowedOrigins` (exact, serialized origins). */
export function createCors(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins);
  const listed = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'POST'],
    // Last-Event-ID: an SSE client resuming a stream on /graphql.
    allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'Last-Event-ID'],
    // Location names a started test; WWW-Authenticate says why a token was refused.
    exposedHeaders: ['Location', 'WWW-Authenticate'],
    maxAge: CORS_MAX_AGE_SECONDS,
    credentials: false,
  });
  return (req: Request, res: Response, next: NextFunction) => {
    // Every answer depends on Origin, including the ones without CORS headers: caches must not mix them.
    res.vary('Origin');
    // A listed origin's preflight is answered by `listed`; anything else comes back here.
    // `cors` passes null, not undefined, when it only skipped an unlisted origin.
    listed(req, res, (error?: unknown) => {
      if (error !== undefined && error !== null) {
        next(error);
        return;
      }
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        res.status(204).setHeader('Content-Length', '0').end();
        return;
      }
      next();
    });
  };
}
