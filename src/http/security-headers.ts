/**
 * Headers on every answer: `X-Content-Type-Options: nosniff`, and a Content-Security-Policy that
 * lets a page load only from the service's own origin. The policy is sent with every answer, so
 * each HTML page the service serves (GraphiQL, the issuer's login, consent, logout and error
 * pages) carries it without each having to remember; JSON answers ignore it.
 */
import type { NextFunction, Request, Response } from 'express';

/**
 * The policy. Beyond `default-src 'self'`, exactly what the pages need: inline styles (the
 * editor injects its own, the login page has one `<style>`), `data:` images and fonts (the
 * GraphiQL stylesheet inlines its icons). `script-src` is spelled out because the issuer adds the
 * hash of its one inline script (the form_post auto-submit) to it. `connect-src 'self'` covers the
 * WebSocket to the same host too.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** Middleware: sets both headers before anything answers. */
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  next();
}
