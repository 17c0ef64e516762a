/**
 * Apollo Server, the HTTP transport of the operation pipeline (`../pipeline/operation-pipeline.ts`).
 * It parses, validates and executes with the lifecycle's values (`parseOptions`, `validationRules`,
 * `validationOptions`, `formatError`), and one adapter plugin runs the lifecycle's other steps from
 * Apollo's hooks: start and document resolution before Apollo reads the document
 * (`requestDidStart`), admission once the operation is resolved (`didResolveOperation`, where a
 * refusal is answered with its own status and code): the steps the graphql-ws and graphql-sse
 * bindings take through `lifecycle.prepare`. An observer of the operation (the endpoint's, from
 * `lifecycle.arrive`) is told of its admission and of the body sent.
 *
 * Nothing phones home and no per-field hook runs: the landing page, usage and schema reporting,
 * inline traces and cache control are off. Apollo's APQ is off too (the pipeline's resolver serves
 * APQ and trusted documents on every transport), and so is its handling of termination signals:
 * the service's stop phases drain HTTP and then stop the server.
 */
import { ApolloServer, type ApolloServerPlugin, type GraphQLRequest } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { GraphQLError } from 'graphql';
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
    schema: pipeline.schema,
    // The switch is one of the pipeline's validation rules, the same on every transport: Apollo's
    // own would add a second rule on HTTP alone, worded for its configuration.
    introspection: true,
    parseOptions: lifecycle.parseOptions,
    // Bounded by what a document holds (its text and tokens), not by its AST alone (document-cache.ts).
    documentStore: pipeline.httpDocuments,
    validationRules: [...lifecycle.validationRules],
    validationOptions: lifecycle.validationOptions,
    formatError: pipeline.lifecycle.formatError,
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
      lifecyclePlugin(pipeline),
    ],
  });
}

/**
 * Stands in for a refused request's document until the refusal can be answered: Apollo Server
 * answers an error thrown as the request starts with a bare 500, and one thrown when the operation
 * is resolved with its own status and code. The refused text itself is never parsed.
 */
const REFUSED_PLACEHOLDER = '{ __typename }';

/** The lifecycle's start, document resolution and admission, as Apollo Server hooks. */
function lifecyclePlugin(pipeline: OperationPipeline): ApolloServerPlugin<GraphQLContext> {
  const { lifecycle } = pipeline;
  return {
    async requestDidStart({ request, contextValue }) {
      let refusal = await lifecycle.start({ principal: contextValue.principal, transport: 'http' });
      // Before Apollo reads `query`.
      const params = refusal === undefined ? lifecycle.resolve({ ...request, documentId: documentIdOf(request) }) : refusal;
      if (params instanceof GraphQLError) {
        refusal = params;
        request.query = REFUSED_PLACEHOLDER;
        request.operationName = undefined;
        request.variables = undefined;
      } else {
        request.query = params.query ?? undefined;
      }
      if (request.extensions?.persistedQuery !== undefined) {
        // Resolved above: Apollo's own APQ, which is off, would refuse the request for it.
        const { persistedQuery: _resolved, ...rest } = request.extensions;
        request.extensions = rest;
      }
      return {
        async didResolveOperation({ document, operation, request: resolved, contextValue }) {
          if (refusal !== undefined) throw refusal;
          // No operation to run: Apollo refuses it itself (OPERATION_RESOLUTION_FAILURE) before execution.
          if (operation === undefined) return;
          const admitted = lifecycle.admit({
            document,
            operation,
            operationName: resolved.operationName,
            variables: resolved.variables,
            extensions: resolved.extensions ?? null,
            principal: contextValue.principal,
            transport: 'http',
          });
          if (admitted !== undefined) throw admitted;
          contextValue.observer?.admitted(operation);
        },
        async willSendResponse({ response, contextValue }) {
          const { observer } = contextValue;
          if (observer === undefined || response.body.kind !== 'single') return;
          const { errors, data, extensions } = response.body.singleResult;
          const plain =
            errors === undefined &&
            extensions === undefined &&
            data !== undefined &&
            (response.http.status ?? 200) === 200 &&
            [...response.http.headers.keys()].length === 0;
          // The body Apollo Server sends for it (`stringifyResult`).
          if (plain) observer.completed(resultBody({ data }));
        },
      };
    },
  };
}

/** `documentId` from a POST's JSON body or a GET's URL: Apollo reads only the standard parameters. */
function documentIdOf(request: GraphQLRequest): unknown {
  const http = request.http;
  if (http === undefined) return undefined;
  if (http.method === 'GET') return new URLSearchParams(http.search).get('documentId') ?? undefined;
  const body = http.body as { documentId?: unknown } | null | undefined;
  return typeof body === 'object' && body !== null ? body.documentId : undefined;
}
