/**
 * `X-Request-Id` on every HTTP answer: the caller's own when well formed (a proxy's, say), else a
 * new one. Unexpected errors are logged with it and answered with it.
 */
import type { NextFunction, Request, Response } from 'express';
import { requestIdFrom, withRequestId } from '../base/request-id.js';

/** Middleware: gives the request its id, echoes it, and makes it current for what follows. */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const requestId = requestIdFrom(req.headers['x-request-id']);
  res.locals.requestId = requestId;
  res.setHeader('X-Request-Id', requestId);
  withRequestId(requestId, next);
}

/** The id {@link assignRequestId} gave this request. */
export function requestIdOf(res: Response): string {
  return res.locals.requestId as string;
}
