/** Apollo Server for GraphQL over HTTP, with the operation limits and the shared error edge. */
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { InsufficientScopeError, bearerChallenge } from '../auth/auth-error.js';
import type { Server } from 'node:http';
import type { GraphQLContext } from './context.js';
import type { ErrorFormatter } from './format-error.js';
import { checkOperationLimits, type OperationLimits } from './limits.js';

/** Options of {@link createApolloServer}. */
export interface ApolloOptions {
  readonly schema: GraphQLSchema;
  readonly httpServer: Server;
  readonly limits: OperationLimits;
  readonly introspection: boolean;
  readonly production: boolean;
  readonly formatError: ErrorFormatter;
  /** How long in-flight requests may finish during shutdown before their sockets are cut. */
  readonly drainMs: number;
}

/**
 * Scope and limits as a plugin rather than validation rules: Apollo replaces the `extensions.code`
 * of every validation error with GRAPHQL_VALIDATION_FAILED, and the cost needs the operation's
 * variables. `didResolveOperation` runs after validation and before execution.
 */
function operationGuardPlugin(schema: GraphQLSchema, limits: OperationLimits): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, operation, contextValue }) {
          if (operation !== undefined) {
            const { access, principal } = contextValue;
            try {
              access.requireScope(principal, access.scopeFor(operation.operation));
            } catch (error) {
              if (!(error instanceof InsufficientScopeError)) throw error;
              throw new GraphQLError(error.message, {
                extensions: { ...error.extensions, http: { status: 403, headers: new HeaderMap([['www-authenticate', bearerChallenge(error) as string]]) } },
              });
            }
          }
          const [error] = checkOperationLimits(schema, document, request.variables, request.operationName ?? undefined, limits);
          if (error !== undefined) {
            throw new GraphQLError(error.message, { nodes: error.nodes ?? [], extensions: { ...error.extensions, http: { status: 400 } } });
          }
        },
      };
    },
  };
}

/** Creates (but does not start) the Apollo server. */
export function createApolloServer(options: ApolloOptions): ApolloServer<GraphQLContext> {
  return new ApolloServer<GraphQLContext>({
    schema: options.schema,
    introspection: options.introspection,
    // The service owns shutdown order (WebSockets, HTTP, consumer, store); Apollo must not exit on its own.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: !options.production,
    formatError: options.formatError,
    plugins: [
      // Nothing here sets cache hints or reports to Apollo's cloud; the cache-control plugin would
      // otherwise wrap every field resolver of every request, and the reporting ones switch on by
      // environment variables alone.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer: options.httpServer, stopGracePeriodMillis: options.drainMs }),
      operationGuardPlugin(options.schema, options.limits),
    ],
  });
}
