/**
 * Apollo Server, the HTTP server and plugin host of the operation pipeline
 * (`../pipeline/operation-pipeline.ts`). Its endpoint (`graphql-endpoint.ts`) runs the lifecycle's
 * steps up to the context (`lifecycle.prepare`: start, document resolution, parse, validation,
 * admission) before Apollo sees a request, as the graphql-ws, graphql-sse and multipart bindings
 * do, and answers a refused one itself; Apollo is handed the prepared document on the request's
 * context, and neither parses nor validates it again (no document store: nothing to keep twice).
 * Apollo resolves the operation and hands it to its executor, which is the lifecycle's `execute`
 * (with the plugins' execute hooks), as on every transport; Apollo then formats the errors with
 * the lifecycle's `formatError`, sets the status by its rules and sends the body.
 *
 * The executor is Apollo's gateway seam (`gateway.load` answers it): the one place Apollo Server
 * takes an executor of the host's. The "gateway" here serves the service's own schema, once, and
 * never changes it.
 *
 * Nothing phones home and no per-field hook runs: the landing page, usage and schema reporting,
 * inline traces and cache control are off. Apollo's APQ is off too (the pipeline's resolver serves
 * APQ and trusted documents on every transport), and so is its handling of termination signals:
 * the service's stop phases drain HTTP and then stop the server.
 */
import { ApolloServer, type ApolloServerOptionsWithGateway, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { printSchema, type DocumentNode } from 'graphql';
import type { Logger } from '../../base/logger.js';
import type { GraphQLContext } from '../pipeline/context.js';
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import { resultBody } from './result-body.js';

/** The HTTP GraphQL server. */
export type HttpGraphQLServer = ApolloServer<GraphQLContext>;

/**
 * Headers that force a browser to preflight a cross-site request: a request with a "simple"
 * content type (a form post) or none (a plain GET) must carry one of them (CSRF prevention).
 *
 * `Authorization` is one of them (it is not a CORS-safelisted header), and the only credential
 * `/graphql` accepts is a bearer token in it: no cookie, no HTTP Basic, no client certificate, so
 * there is no ambient credential a forged request could ride on. Every operation that reaches
 * Apollo Server carries it (the edge answers 401 first), so a GET query as urql sends it by default
 * (no content type, no custom header) is served; were a cookie ever accepted, a request carrying it
 * without one of these headers would still be refused.
 */
const PREFLIGHT_HEADERS = ['authorization', 'apollo-require-preflight', 'x-apollo-operation-name', 'graphql-require-preflight'];

/** Creates (but does not start) the server for `pipeline`. */
export function createApolloGraphQLServer(pipeline: OperationPipeline, logger: Logger): HttpGraphQLServer {
  const { lifecycle } = pipeline;
  return new ApolloServer<GraphQLContext>({
    gateway: lifecycleExecution(pipeline),
    // The switch is one of the pipeline's validation rules, the same on every transport: Apollo's
    // own would add a second rule on HTTP alone, worded for its configuration.
    introspection: true,
    // Documents come prepared (parsed, validated and kept by the lifecycle): Apollo keeps none.
    documentStore: null,
    formatError: lifecycle.formatError,
    // One serializer for what is sent and what the response cache keeps.
    stringifyResult: resultBody,
    includeStacktraceInErrorResponses: pipeline.debugErrors,
    allowBatchedHttpRequests: false,
    persistedQueries: false,
    csrfPrevention: { requestHeaders: PREFLIGHT_HEADERS },
    stopOnTerminationSignals: false,
    logger: logger.child({ component: 'graphql' }),
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      lifecyclePlugin(),
    ],
  });
}

/** Apollo Server's executor: the lifecycle's `execute`, over the service's schema (see the file header). */
function lifecycleExecution(pipeline: OperationPipeline): ApolloServerOptionsWithGateway<GraphQLContext>['gateway'] {
  const { schema, lifecycle } = pipeline;
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    load: async () => ({
      // Every operation that reaches it was prepared (the plugin below refuses any other at its start).
      executor: async ({ context }) => lifecycle.execute({ ...(context as Required<Pick<GraphQLContext, 'prepared'>>).prepared, contextValue: context }),
    }),
    stop: async () => {},
  };
}

/** Hands Apollo Server each operation's prepared document (and its text), so that it parses and validates nothing. */
function lifecyclePlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart({ request, contextValue }) {
      const { prepared } = contextValue;
      // The endpoint prepares every operation before Apollo Server reads it (graphql-endpoint.ts).
      if (prepared === undefined) throw new Error('an HTTP operation reached Apollo Server unprepared');
      // Its text (resolved from an id, say): Apollo needs one, and hashes it, but parses nothing.
      request.query = prepared.query;
      if (request.extensions?.persistedQuery !== undefined) {
        // Resolved by the lifecycle: Apollo's own APQ, which is off, would refuse the request for it.
        const { persistedQuery: _resolved, ...rest } = request.extensions;
        request.extensions = rest;
      }
      return {
        async didResolveSource(requestContext) {
          // With no document store, Apollo parses and validates only a request that has no document yet.
          (requestContext as { document?: DocumentNode }).document = prepared.document;
        },
        async parsingDidStart() {
          // Fails closed: Apollo would parse and validate without the lifecycle's limits (an upgrade that no longer takes the document).
          throw new Error('Apollo Server began to parse a document the lifecycle prepared');
        },
      };
    },
  };
}
