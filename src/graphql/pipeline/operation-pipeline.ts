/**
 * The one GraphQL operation pipeline, composed once per process and handed to the four transports:
 * Apollo Server over HTTP (`../http/apollo-server.ts`), graphql-ws (`../ws/`), graphql-sse
 * (`../sse/`) and HTTP multipart subscriptions (`../multipart/`). It holds the operation lifecycle
 * over its plugins (`operation-lifecycle.ts`, `plugins/`), the context factory and the one shared
 * subscription execution, so a WebSocket subscriber and an SSE subscriber of the same operation
 * share one execution per event.
 */
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../../auth/principal.js';
import type { Logger } from '../../base/logger.js';
import { createGraphQLContext, type GraphQLContext, type GraphQLDeps } from './context.js';
import { createOperationLifecycle, type OperationLifecycle } from './operation-lifecycle.js';
import type { OperationPlugin, PreparedOperation } from './operation-plugin.js';
import { createFanoutHub, type FanoutHub } from '../fanout/fanout-hub.js';

/** Options of {@link createOperationPipeline}. */
export interface OperationPipelineOptions {
  readonly schema: GraphQLSchema;
  readonly deps: GraphQLDeps;
  /** The lifecycle's plugins, in order (the service's are `plugins/index.ts`'s). */
  readonly plugins: readonly OperationPlugin[];
  /** Unexpected errors' stack traces to clients over HTTP too (GRAPHQL_DEBUG_ERRORS; the error-masking plugin shows the rest). */
  readonly debugErrors: boolean;
  readonly logger: Logger;
}

/** The pipeline, as the transports use it. */
export interface OperationPipeline {
  readonly schema: GraphQLSchema;
  /** Every step an operation takes, over the plugins. */
  readonly lifecycle: OperationLifecycle;
  /** Unexpected errors' own messages and stack traces to clients. */
  readonly debugErrors: boolean;
  /** A fresh context (with fresh loaders) for one HTTP operation the lifecycle prepared, for Apollo Server to carry it in. */
  createContext(principal: Principal, prepared: PreparedOperation): GraphQLContext;
  /** Where subscriptions are pushed from: one execution per event and operation, one synchronous pass over the subscribers. */
  readonly hub: FanoutHub;
}

/** Composes the pipeline. */
export function createOperationPipeline(options: OperationPipelineOptions): OperationPipeline {
  const { schema, deps } = options;
  const logger = options.logger.child({ component: 'graphql' });
  const lifecycle = createOperationLifecycle({
    schema,
    plugins: options.plugins,
    // Streamed operations' contexts keep no reads (context.ts): a subscription's lives as long as it does.
    createContext: (principal, resumeAfter) => createGraphQLContext(deps, principal, { resumeAfter, cacheReads: false }),
    observerFailed: (plugin, hook, error) => logger.error({ err: error, plugin, hook }, 'a plugin hook failed; the operation goes on without it'),
  });
  return {
    schema,
    lifecycle,
    debugErrors: options.debugErrors,
    createContext: (principal, prepared) => createGraphQLContext(deps, principal, { prepared }),
    hub: createFanoutHub({ logger, observeEvent: lifecycle.observeEvent }),
  };
}
