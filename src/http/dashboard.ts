/**
 * The live dashboard, served by the service itself from the static build of web/dashboard/ (`npm
 * run build:web`) at `/dashboard/`, with its assets and settings under it. No token is needed for
 * the page; it signs in (code + PKCE at the embedded issuer) and its API calls carry the token.
 */
import { Router } from 'express';
import { fileURLToPath } from 'node:url';
import { sendBuiltPage, serveBuildFiles, type BuiltPageOptions } from './built-page.js';
import { sendProblem } from './problem.js';

/** Where `npm run build:web` puts the dashboard: dist/web/dashboard/ (the same place from src/ and dist/). */
export const DASHBOARD_BUILD_DIR = fileURLToPath(new URL('../../dist/web/dashboard/', import.meta.url));

/** Options of {@link createDashboardRoutes} (DASHBOARD, DASHBOARD_CLIENT_ID). */
export type DashboardOptions = BuiltPageOptions;

/** The dashboard's routes: the page at `/dashboard/` (its sign-in redirect URI), its settings and assets. */
export function createDashboardRoutes(options: DashboardOptions): Router {
  const router = Router({ strict: true });
  const dir = options.buildDir ?? DASHBOARD_BUILD_DIR;

  if (!options.enabled) {
    router.use('/dashboard', (req, res) => {
      sendProblem(res, 'NOT_FOUND', 'The dashboard is turned off here (DASHBOARD=false).', { instance: req.originalUrl });
    });
    return router;
  }
  // One address for the page, the one registered as the redirect URI: with the slash.
  router.get('/dashboard', (_req, res) => res.redirect(301, '/dashboard/'));
  router.get('/dashboard/', (req, res) => sendBuiltPage(req, res, dir, 'The dashboard'));
  serveBuildFiles(router, '/dashboard', dir, options);
  return router;
}
