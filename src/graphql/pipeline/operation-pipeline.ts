/**
 * The one GraphQL operation pipeline, composed once per process and handed to the three transports:
 * Apollo Server over HTTP (`../http/apollo-server.ts`), graphql-ws (`../ws/`) and graphql-sse
 * (`../sse/`). It holds every rule an operation passes (`operation-rules.ts`), the document resolver
 * (`persisted-operations.ts`), the context factory, the error edge (`format-error.ts`), the streaming
 * transports' preparation (`prepare-operation.ts`) and their one shared subscription execution, so
 * a WebSocket subscriber and an SSE subscriber of the same operation share one execution per event.
 */
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../../auth/principal.js';
import type { Logger } from '../../base/logger.js';
import { createGraphQLContext, type GraphQLContext, type GraphQLDeps, type ResponseFill } from './context.js';
import { createDocumentCache, createKeyedDocumentStore, type KeyedDocumentStore } from './document-cache.js';
import { createErrorFormatter, type FormatError } from './format-error.js';
import type { OperationLimits } from './operation-limits.js';
import { createOperationRules, type OperationRules } from './operation-rules.js';
import type { ResolveOperation } from './persisted-operations.js';
import { createOperationPreparer, type PrepareOperation } from './prepare-operation.js';
import type { ShapeLimits } from './shape-limits.js';
import { createSharedSubscribe, type SharedSubscribe } from './shared-subscribe.js';

/** Options of {@link createOperationPipeline}. */
export interface OperationPipelineOptions {
  readonly schema: GraphQLSchema;
  readonly deps: GraphQLDeps;
  readonly limits: OperationLimits;
  readonly shapeLimits: ShapeLimits;
  /** Whether the schema may be introspected (GraphQL IDEs need it). */
  readonly introspection: boolean;
  /** Whether trusted documents are on (a federated subgraph then refuses `_entities` and `_service`). */
  readonly trustedDocuments?: boolean;
  /** Turns a request's document id (trusted documents, APQ) into its text. */
  readonly resolveOperation: ResolveOperation;
  /** Unexpected errors' own messages and stack traces to clients (GRAPHQL_DEBUG_ERRORS). */
  readonly debugErrors: boolean;
  /** Bytes of parsed documents kept for reuse, by HTTP and by the streaming transports each (`GRAPHQL_DOCUMENT_CACHE_MAX_BYTES`). */
  readonly documentCacheBytes?: number;
  readonly logger: Logger;
}

/** The default of `GRAPHQL_DOCUMENT_CACHE_MAX_BYTES`. */
export const DEFAULT_DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;

/** The pipeline, as the transports use it. */
export interface OperationPipeline {
  readonly schema: GraphQLSchema;
  readonly rules: OperationRules;
  readonly resolveOperation: ResolveOperation;
  readonly formatError: FormatError;
  /** Unexpected errors' own messages and stack traces to clients. */
  readonly debugErrors: boolean;
  /** A fresh context (with fresh loaders) for one operation. */
  createContext(principal: Principal, resumeAfter?: string, responseFill?: ResponseFill): GraphQLContext;
  /** Resolve, parse, validate, admit, context: for the streaming transports. */
  readonly prepare: PrepareOperation;
  /** Subscription execution shared by every streaming subscriber. */
  readonly subscribe: SharedSubscribe;
  /** Apollo Server's document store, bounded by what its documents hold (document-cache.ts). */
  readonly httpDocuments: KeyedDocumentStore;
}

/** Composes the pipeline. */
export function createOperationPipeline(options: OperationPipelineOptions): OperationPipeline {
  const { schema, deps, resolveOperation } = options;
  const rules = createOperationRules({ schema, access: deps.access, limits: options.limits, shapeLimits: options.shapeLimits, introspection: options.introspection, trustedDocuments: options.trustedDocuments ?? false });
  const createContext = (principal: Principal, resumeAfter?: string, responseFill?: ResponseFill) => createGraphQLContext(deps, principal, resumeAfter, responseFill);
  const documentCacheBytes = options.documentCacheBytes ?? DEFAULT_DOCUMENT_CACHE_BYTES;
  return {
    schema,
    rules,
    resolveOperation,
    formatError: createErrorFormatter({ debug: options.debugErrors, logger: options.logger }),
    debugErrors: options.debugErrors,
    createContext,
    // Streamed operations' contexts keep no reads (context.ts): a subscription's lives as long as it does.
    prepare: createOperationPreparer({ schema, rules, resolveOperation, createContext: (principal, resumeAfter) => createGraphQLContext(deps, principal, resumeAfter, undefined, false), documents: createDocumentCache(documentCacheBytes) }),
    subscribe: createSharedSubscribe({ logger: options.logger.child({ component: 'graphql' }) }),
    httpDocuments: createKeyedDocumentStore(documentCacheBytes),
  };
}
