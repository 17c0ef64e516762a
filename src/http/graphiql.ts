/**
 * GraphiQL, served by the service itself from the static build of web/graphiql/ (`npm run
 * build:web`): `GET /graphql` for a browser (`Accept: text/html`) gets the page, `/graphiql/*` its
 * assets and settings. No token is needed for the page; the API calls it makes carry one.
 * Nothing it loads comes from another origin.
 */
import { Router, type Request, type Response } from 'express';
import { fileURLToPath } from 'node:url';
import { sendBuiltPage, serveBuildFiles, type BuiltPageOptions } from './built-page.js';
import { sendProblem } from './problem.js';

/** Where `npm run build:web` puts the page: dist/web/graphiql/ (the same place from src/ and dist/). */
export const GRAPHIQL_BUILD_DIR = fileURLToPath(new URL('../../dist/web/graphiql/', import.meta.url));

/** Options of {@link createGraphiqlRoutes} (GRAPHQL_IDE, GRAPHQL_IDE_CLIENT_ID). */
export type GraphiqlOptions = BuiltPageOptions;

/** True when the client prefers an HTML page over a GraphQL JSON answer (a browser's address bar). */
function wantsHtml(req: Request): boolean {
  return req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/** The routes of the page; mount before the GraphQL endpoint, so a browser never reaches it. */
export function createGraphiqlRoutes(options: GraphiqlOptions): Router {
  const router = Router();
  const dir = options.buildDir ?? GRAPHIQL_BUILD_DIR;

  router.get('/graphql', (req: Request, res: Response, next) => {
    if (!wantsHtml(req)) {
      next();
      return;
    }
    if (!options.enabled) {
      sendProblem(res, 'NOT_FOUND', 'GraphiQL is turned off here (GRAPHQL_IDE=false). Send GraphQL operations as POST /graphql with a bearer token.', { instance: req.originalUrl });
      return;
    }
    sendBuiltPage(req, res, dir, 'GraphiQL');
  });

  if (!options.enabled) return router;
  serveBuildFiles(router, '/graphiql', dir, options);
  return router;
}
