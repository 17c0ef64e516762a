/**
 * GraphiQL, served by the service itself from the static build of web/graphiql/ (`npm run
 * build:web`): a browser's `GET /graphql` (`Accept: text/html`, {@link wantsGraphiqlPage})
 * gets the page ({@link createGraphiqlPage}), `/graphiql/*` its assets and settings. No token is needed for the page; the API calls it makes carry one.
 * Nothing it loads comes from another origin.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fileURLToPath } from 'node:url';
import { sendBuiltPage, serveBuildFiles, type BuiltPageOptions } from './built-page.js';
import { sendProblem } from './problem.js';

/** Where `npm run build:web` puts the page: dist/web/graphiql/ (the same place from src/ and dist/). */
export const GRAPHIQL_BUILD_DIR = fileURLToPath(new URL('../../dist/web/graphiql/', import.meta.url));

/** Options of {@link createGraphiqlRoutes} (GRAPHQL_IDE, GRAPHQL_IDE_CLIENT_ID). */
export type GraphiqlOptions = BuiltPageOptions;

/**
 * Whether a request to `/graphql` asks for the page: a browser's GET that prefers HTML over the
 * GraphQL response types. Anything else is an operation.
 */
export function wantsGraphiqlPage(req: Request): boolean {
  return req.method === 'GET' && req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/** The page itself, or a 404 saying it is off. */
export function createGraphiqlPage(options: GraphiqlOptions): RequestHandler {
  const dir = options.buildDir ?? GRAPHIQL_BUILD_DIR;
  return (req: Request, res: Response) => {
    if (!options.enabled) {
      sendProblem(res, 'NOT_FOUND', 'GraphiQL is turned off here (GRAPHQL_IDE=false). Send GraphQL operations as POST /graphql with a bearer token.', {
        instance: req.originalUrl,
      });
      return;
    }
    sendBuiltPage(req, res, dir, 'GraphiQL');
  };
}

/** The page's assets and settings under `/graphiql/`, when it is on. */
export function createGraphiqlRoutes(options: GraphiqlOptions): Router {
  const router = Router();
  if (options.enabled) serveBuildFiles(router, '/graphiql', options.buildDir ?? GRAPHIQL_BUILD_DIR, options);
  return router;
}
