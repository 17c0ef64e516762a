/**
 * GraphiQL, served by the service itself from the static build of web/graphiql/ (`npm run
 * build:web`): `GET /graphql` for a browser (`Accept: text/html`) gets the page, `/graphiql/*` its
 * assets and settings. No token is needed for the page; the API calls it makes carry one.
 * Nothing it loads comes from another origin.
 */
import express, { Router, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sendProblem } from './problem.js';

/** Where `npm run build:web` puts the page: dist/web/graphiql/ (the same place from src/ and dist/). */
export const GRAPHIQL_BUILD_DIR = fileURLToPath(new URL('../../dist/web/graphiql/', import.meta.url));

/** Options of {@link createGraphiqlRoutes}. */
export interface GraphiqlOptions {
  /** Serve the page (GRAPHQL_IDE); when false, browsers get a 404 that says how to turn it on. */
  readonly enabled: boolean;
  /** The public client the page signs in with (code + PKCE at the embedded issuer); null: no sign-in button. */
  readonly signInClientId: string | null;
  /** Scopes the page asks for when signing in. */
  readonly signInScope: string;
  /** The built page; {@link GRAPHIQL_BUILD_DIR} by default. */
  readonly buildDir?: string;
}

/** True when the client prefers an HTML page over a GraphQL JSON answer (a browser's address bar). */
function wantsHtml(req: Request): boolean {
  return req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/** The routes of the page; mount before the GraphQL endpoint, so a browser never reaches it. */
export function createGraphiqlRoutes(options: GraphiqlOptions): Router {
  const router = Router();
  const dir = options.buildDir ?? GRAPHIQL_BUILD_DIR;
  const page = `${dir}index.html`;

  router.get('/graphql', (req: Request, res: Response, next) => {
    if (!wantsHtml(req)) {
      next();
      return;
    }
    if (!options.enabled) {
      sendProblem(res, 'NOT_FOUND', 'GraphiQL is turned off here (GRAPHQL_IDE=false). Send GraphQL operations as POST /graphql with a bearer token.', { instance: req.originalUrl });
      return;
    }
    if (!existsSync(page)) {
      sendProblem(res, 'NOT_FOUND', 'GraphiQL has not been built: run "npm run build:web" (scripts/setup.sh does).', { instance: req.originalUrl });
      return;
    }
    // The page holds no secret and changes with each build; the token never touches it.
    res.setHeader('Cache-Control', 'no-store');
    res.sendFile(page);
  });

  if (!options.enabled) return router;

  router.get('/graphiql/config.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ signIn: options.signInClientId === null ? null : { clientId: options.signInClientId, scope: options.signInScope } });
  });
  // Hashed file names: an asset never changes under its name.
  router.use('/graphiql/assets', express.static(`${dir}assets`, { immutable: true, maxAge: '1y', index: false, fallthrough: true }));
  return router;
}
