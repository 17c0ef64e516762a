/**
 * Serving a page built by Vite from web/ (GraphiQL, the dashboard): its HTML with no caching, its
 * settings as JSON, and its hashed assets cached for good. Everything from the service's own
 * origin, under its CSP.
 */
import express, { type Request, type Response, type Router } from 'express';
import { existsSync } from 'node:fs';
import { sendProblem } from './problem.js';

/** Options of a built page. */
export interface BuiltPageOptions {
  /** Serve the page; when false, browsers get a 404 that says how to turn it on. */
  readonly enabled: boolean;
  /** The public client the page signs in with (code + PKCE at the embedded issuer); null: no sign-in. */
  readonly signInClientId: string | null;
  /** Scopes the page asks for when signing in. */
  readonly signInScope: string;
  /** Where the build is; the page's folder under dist/web/ by default. */
  readonly buildDir?: string;
}

/** Sends the built page's `index.html`, or a 404 that says how to build it. */
export function sendBuiltPage(req: Request, res: Response, dir: string, what: string): void {
  const page = `${dir}index.html`;
  if (!existsSync(page)) {
    sendProblem(res, 'NOT_FOUND', `${what} has not been built: run "npm run build:web" (scripts/setup.sh does).`, { instance: req.originalUrl });
    return;
  }
  // The page holds no secret and changes with each build; tokens never touch it.
  res.setHeader('Cache-Control', 'no-store');
  res.sendFile(page);
}

/** `<base>/config.json` (how the page signs in) and `<base>/assets/*` from the build in `dir`. */
export function serveBuildFiles(router: Router, base: string, dir: string, options: BuiltPageOptions): void {
  const settings = { signIn: options.signInClientId === null ? null : { clientId: options.signInClientId, scope: options.signInScope } };
  router.get(`${base}/config.json`, (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(settings);
  });
  // Hashed file names: an asset never changes under its name.
  router.use(`${base}/assets`, express.static(`${dir}assets`, { immutable: true, maxAge: '1y', index: false, fallthrough: true }));
}
