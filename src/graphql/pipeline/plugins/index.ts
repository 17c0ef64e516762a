/**
 * The plugins the service runs, in order: where a concern of the operation lifecycle is listed.
 * Order matters where two plugins hook the same step: validation rules report in this order, and
 * the first refusal at `onStart` or `onAdmit` wins (scopes before cost: a caller without the scope
 * learns nothing of what the operation would cost).
 */
import type { GraphQLSchema } from 'graphql';
import type { AccessPolicy } from '../../../auth/access.js';
import type { Logger } from '../../../base/logger.js';
import type { PersistedOperationsConfig } from '../../../config/persisted-documents.js';
import type { RateLimits } from '../../../rate-limits/rate-limits.js';
import type { OperationPlugin } from '../operation-plugin.js';
import type { ResponseCache } from '../response-cache.js';
import { deliveryGuaranteePlugin } from './delivery-guarantee.js';
import { documentCachingPlugin } from './document-caching.js';
import { errorMaskingPlugin } from './error-masking.js';
import { introspectionPlugin } from './introspection.js';
import { operationLimitsPlugin, type OperationLimits } from './operation-limits.js';
import { persistedOperationsPlugin } from './persisted-operations.js';
import { pushTracingPlugin } from './push-tracing.js';
import { responseCachingPlugin } from './response-caching.js';
import { scopeAdmissionPlugin } from './scope-admission.js';
import { shapeLimitsPlugin, type ShapeLimits } from './shape-limits.js';
import { streamRateLimitsPlugin } from './stream-rate-limits.js';

/** What the service's plugins are configured with. */
export interface ServicePluginsOptions {
  readonly schema: GraphQLSchema;
  readonly access: AccessPolicy;
  readonly persistedOperations: PersistedOperationsConfig;
  /** Whether the schema may be introspected (GraphQL IDEs need it). */
  readonly introspection: boolean;
  readonly limits: OperationLimits;
  readonly shapeLimits: ShapeLimits;
  readonly rateLimits: RateLimits;
  /** Answers of test reads kept for callers of the same visibility; none when absent. */
  readonly responseCache?: ResponseCache;
  /** Bytes of parsed documents kept for reuse, by every transport together (`GRAPHQL_DOCUMENT_CACHE_MAX_BYTES`; 16 MiB when absent). */
  readonly documentCacheBytes?: number;
  /** Unexpected errors' own messages and stack traces to clients (GRAPHQL_DEBUG_ERRORS). */
  readonly debugErrors: boolean;
  readonly logger: Logger;
}

/** The service's plugins, in the order the lifecycle runs them. */
export function servicePlugins(options: ServicePluginsOptions): OperationPlugin[] {
  return [
    // Its step, arrive, runs before every other: a kept answer is sent as is (the HTTP edge has counted the request).
    ...(options.responseCache ? [responseCachingPlugin(options.responseCache)] : []),
    streamRateLimitsPlugin(options.rateLimits),
    // The parse and validate phases' only hooks: a text seen before is neither parsed nor validated again.
    documentCachingPlugin(options.documentCacheBytes),
    persistedOperationsPlugin(options.persistedOperations),
    introspectionPlugin({ introspection: options.introspection, trustedDocuments: options.persistedOperations.trustedDocuments !== null }),
    scopeAdmissionPlugin(options.access),
    operationLimitsPlugin(options.schema, options.limits),
    deliveryGuaranteePlugin(),
    shapeLimitsPlugin(options.shapeLimits),
    pushTracingPlugin(),
    errorMaskingPlugin({ debug: options.debugErrors, logger: options.logger }),
  ];
}
