/**
 * The one GraphQL operation pipeline (GraphQL Yoga and its envelop plugins), served over HTTP by
 * Yoga itself and over WebSocket by the graphql-ws binding (`ws-server.ts`), which runs every
 * operation through `getEnveloped` as well. Both transports therefore share the parse cache,
 * validation with every limit, the scope check, context creation, execution and the error edge.
 * Subscriptions (WebSocket only) execute each event once for all the subscribers of the same
 * operation (`shared-subscribe.ts`). A document sent by id (trusted documents, APQ) is resolved to
 * its text by one function both transports call first (`persisted-operations.ts`).
 */
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaLogger, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from '../logger.js';
import { currentRequestId } from '../request-id.js';
import { createGraphQLContext, type GraphQLContext, type GraphQLDeps } from './context.js';
import type { MaskError } from './format-error.js';
import type { OperationLimits } from './limits.js';
import { useOperationGuard, type OperationSource } from './operation-guard.js';
import { useResolvedOperations, type ResolveOperation } from './persisted-operations.js';
import { shapeLimitPlugins, type ShapeLimits } from './shape-limits.js';

/** The pipeline; `getEnveloped` is what the WebSocket binding runs operations through. */
export type GraphQLServer = YogaServerInstance<OperationSource, GraphQLContext>;

/** Options of {@link createGraphQLServer}. */
export interface GraphQLServerOptions {
  readonly schema: GraphQLSchema;
  readonly deps: GraphQLDeps;
  readonly limits: OperationLimits;
  readonly shapeLimits: ShapeLimits;
  readonly introspection: boolean;
  /** Turns a request's document id (trusted documents, APQ) into its text; the WebSocket binding calls it too. */
  readonly resolveOperation: ResolveOperation;
  readonly maskError: MaskError;
  readonly logger: Logger;
}

/**
 * Creates the pipeline. Over HTTP it answers at `/graphql` (POST with a JSON body, or GET for
 * queries), with no IDE, landing page or CORS of its own: those are the HTTP app's.
 */
export function createGraphQLServer(options: GraphQLServerOptions): GraphQLServer {
  return createYoga<OperationSource, GraphQLContext>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    cors: false,
    batching: false,
    multipart: false,
    logging: yogaLogger(options.logger.child({ component: 'graphql' })),
    maskedErrors: { maskError: options.maskError },
    // Validation results are cached per document by the operation guard, which knows what they depend on.
    parserAndValidationCache: { validationCache: false },
    context: ({ principal, resumeAfter }) => createGraphQLContext(options.deps, principal, resumeAfter),
    plugins: [
      // A browser sends a "simple" cross-site request (a form post, a plain GET) without a CORS
      // preflight; one that carries neither a JSON content type nor one of these headers is refused.
      useResolvedOperations(options.resolveOperation),
      useCSRFPrevention({ requestHeaders: ['apollo-require-preflight', 'x-apollo-operation-name', 'graphql-require-preflight', 'x-graphql-yoga-csrf'] }),
      ...shapeLimitPlugins(options.shapeLimits),
      useOperationGuard({ schema: options.schema, access: options.deps.access, limits: options.limits, introspection: options.introspection }),
      useRefusalStatus(),
    ],
  });
}

/**
 * Yoga answers a refused request with 200 when the client accepts `application/json` (as the
 * GraphQL-over-HTTP spec allows for legacy clients); the service answers every refusal with its
 * own 4xx whatever the client accepts, as it always has.
 */
function useRefusalStatus(): Plugin {
  return {
    onResultProcess({ result }) {
      if (Array.isArray(result) || !('errors' in result) || result.errors === undefined) return;
      for (const error of result.errors) {
        const http = error instanceof GraphQLError ? (error.extensions.http as { spec?: boolean } | undefined) : undefined;
        if (http?.spec === true) http.spec = false;
      }
    },
  };
}

/**
 * Yoga's log calls on the service's logger; the errors it logs are the ones it masked, right after
 * masking them, so the request id is the one the masked error carries.
 */
function yogaLogger(log: Logger): YogaLogger {
  const text = (args: unknown[]) => args.map(String).join(' ');
  return {
    // Yoga logs at debug level on every request: the text is built only when someone reads it.
    debug: (...args) => {
      if (log.isLevelEnabled('debug')) log.debug(text(args));
    },
    info: (...args) => log.info(text(args)),
    warn: (...args) => log.warn(text(args)),
    error: (...args) => {
      const [first] = args;
      if (!(first instanceof Error)) return log.error(text(args));
      const cause = first instanceof GraphQLError ? (first.originalError ?? first) : first;
      log.error({ err: cause, requestId: currentRequestId(), ...(first instanceof GraphQLError && first.path ? { path: first.path } : {}) }, 'unexpected error in a GraphQL operation');
    },
  };
}
