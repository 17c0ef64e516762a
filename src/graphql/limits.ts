/**
 * Depth and cost limits, checked before execution by the operation pipeline's guard
 * (`operation-guard.ts`), which HTTP and WebSocket share.
 */
import depthLimit from 'graphql-depth-limit';
import { GraphQLError, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import type { ErrorCode } from '../errors.js';
import { MAX_IDS_PER_QUERY, MAX_TESTS_PER_PAGE } from './resolvers.js';

/** Budgets of one operation. */
export interface OperationLimits {
  readonly maxDepth: number;
  readonly maxCost: number;
}

/**
 * Cost model: every field costs 1 plus its children, and list fields multiply their children by
 * how many items they may return: `tests` by the number of ids, `messages` and `recentTests` by `first`.
 */
const listEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (type.name === 'Query' && field.name === 'tests') {
    const ids = Array.isArray(args.correlationIds) ? Math.min(args.correlationIds.length, MAX_IDS_PER_QUERY) : 1;
    return 1 + ids * childComplexity;
  }
  if (type.name === 'Query' && field.name === 'recentTests') {
    const first = typeof args.first === 'number' && args.first > 0 ? Math.min(args.first, MAX_TESTS_PER_PAGE) : 0;
    return 1 + first * childComplexity;
  }
  if (type.name === 'Test' && field.name === 'messages') {
    const first = typeof args.first === 'number' && args.first > 0 ? args.first : 0;
    return 1 + first * childComplexity;
  }
  return undefined;
};

const estimators = [listEstimator, simpleEstimator({ defaultComplexity: 1 })];

/** The cost of an operation under the model above; throws on variables that do not coerce. */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): number {
  return getComplexity({ schema, query: document, variables: variables ?? {}, ...(operationName ? { operationName } : {}), estimators });
}

/** Per-document results, dropped with the document when the parse cache lets it go. */
const analyses = new WeakMap<DocumentNode, { limits: OperationLimits; depth: readonly GraphQLError[]; costs: Map<string, number> }>();

/**
 * The limit violations of an already validated operation, as GraphQL errors carrying
 * `extensions.code` QUERY_TOO_DEEP or QUERY_TOO_COMPLEX. Empty when within budget.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  limits: OperationLimits,
): GraphQLError[] {
  // The parse cache hands the same parsed document to every request with the same query text, so
  // the depth (which depends on the document alone) is computed once per document, and the cost once
  // per document and variables.
  let cached = analyses.get(document);
  if (cached === undefined || cached.limits !== limits) {
    // Introspection fields (`__schema`, `__type`) are not counted, so GraphQL IDEs keep working.
    cached = { limits, depth: validate(schema, document, [depthLimit(limits.maxDepth)]), costs: new Map() };
    analyses.set(document, cached);
  }
  const deep = cached.depth;
  if (deep.length > 0) {
    return deep.map(
      (error) =>
        new GraphQLError(error.message, {
          nodes: error.nodes ?? [],
          extensions: { code: 'QUERY_TOO_DEEP' satisfies ErrorCode, maxDepth: limits.maxDepth },
        }),
    );
  }
  const costKey = `${operationName ?? ''}\u0000${JSON.stringify(variables ?? {})}`;
  let cost = cached.costs.get(costKey);
  if (cost === undefined) {
    try {
      cost = operationCost(schema, document, variables, operationName);
    } catch {
      // Variables that do not coerce: execution rejects the operation with the precise reason.
      return [];
    }
    // Bounded: a document used with ever new variables must not grow without end.
    if (cached.costs.size >= 256) cached.costs.clear();
    cached.costs.set(costKey, cost);
  }
  if (cost > limits.maxCost) {
    return [
      new GraphQLError(`Operation cost ${cost} exceeds the maximum of ${limits.maxCost}. Ask for fewer ids or smaller pages.`, {
        extensions: { code: 'QUERY_TOO_COMPLEX' satisfies ErrorCode, cost, maxCost: limits.maxCost },
      }),
    ];
  }
  return [];
}
