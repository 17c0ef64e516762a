/**
 * Depth and cost limits, one plugin of the lifecycle, so every transport checks them before
 * execution: depth with validation, cost when the operation is admitted (it depends on the variables).
 */
import depthLimit from 'graphql-depth-limit';
import { createHash } from 'node:crypto';
import {
  GraphQLError,
  NoFragmentCyclesRule,
  Kind,
  getOperationAST,
  validate,
  visit,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { ServiceError } from '../../../base/errors.js';
import { MAX_PAGE_SIZE } from '../../schema/pagination.js';
import { MAX_IDS_PER_QUERY, MAX_TESTS_PER_PAGE } from '../../schema/resolvers.js';
import type { OperationPlugin } from '../operation-plugin.js';
import { refusalError } from '../refusal-error.js';

/** Budgets of one operation. */
export interface OperationLimits {
  readonly maxDepth: number;
  readonly maxCost: number;
}

/** The depth and cost budgets of `limits` as a plugin. */
export function operationLimitsPlugin(schema: GraphQLSchema, limits: OperationLimits): OperationPlugin {
  return {
    name: 'operation-limits',
    validationRules: [depthRule(limits.maxDepth)],
    onAdmit: ({ document, variables, operationName }) =>
      checkOperationCost(schema, document, variables ?? undefined, operationName ?? undefined, limits.maxCost),
  };
}

/**
 * Cost model: every field costs 1 plus its children, and list fields multiply their children by
 * how many items they may return: `tests` by the number of ids, a federation gateway's `_entities`
 * by the number of representations (each one entity, as each id of `tests` is one test), `messages`
 * and `recentTests` by `first`. The cost is what the operation may read: a test (`test`, `tests`,
 * `_entities`, `recentTests`) is read as its summary, without its messages, so a selection
 * without `messages` costs nothing per message; `messages(first:)` reads that page alone, and
 * costs `first` times its selection (at least 1 per message, `__typename` or `totalCount` alone too).
 */
const listEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (type.name === 'Query' && field.name === 'tests') {
    const ids = Array.isArray(args.correlationIds) ? Math.min(args.correlationIds.length, MAX_IDS_PER_QUERY) : 1;
    return 1 + ids * childComplexity;
  }
  if (type.name === 'Query' && field.name === '_entities') {
    // Past the cap the resolver refuses the batch (schema.ts), so it never costs more than the cap.
    const representations = Array.isArray(args.representations) ? Math.min(args.representations.length, MAX_IDS_PER_QUERY) : 1;
    return 1 + representations * childComplexity;
  }
  if (type.name === 'Query' && field.name === 'recentTests') {
    const first = typeof args.first === 'number' && args.first > 0 ? Math.min(args.first, MAX_TESTS_PER_PAGE) : 0;
    return 1 + first * childComplexity;
  }
  if (type.name === 'Test' && field.name === 'messages') {
    // Past the cap the resolver refuses the page (pagination.ts), so it never costs more than the cap.
    const first = typeof args.first === 'number' && args.first > 0 ? Math.min(args.first, MAX_PAGE_SIZE) : 0;
    return 1 + first * childComplexity;
  }
  return undefined;
};

const estimators = [listEstimator, simpleEstimator({ defaultComplexity: 1 })];

/** The cost of an operation under the model above; throws on variables that do not coerce. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
): number {
  return getComplexity({ schema, query: document, variables: variables ?? {}, ...(operationName ? { operationName } : {}), estimators });
}

/**
 * The depth budget as a validation rule (graphql-depth-limit's), its refusals carrying
 * QUERY_TOO_DEEP. Depth depends on the document alone, so it is checked with the rest of
 * validation, whose result every transport keeps per document. Introspection fields (`__schema`,
 * `__type`) are not counted, so GraphQL IDEs keep working.
 */
export function depthRule(maxDepth: number): ValidationRule {
  const rule = depthLimit(maxDepth) as unknown as ValidationRule;
  return (context) => {
    // graphql-depth-limit follows fragment spreads without end on a cycle; graphql-js's own rule
    // refuses a document with one, and its depth is then not measured.
    if (validate(context.getSchema(), context.getDocument(), [NoFragmentCyclesRule]).length > 0) return {};
    // graphql-depth-limit indexes operations and fragments by name in plain objects, so a name
    // such as `__proto__` or an undefined `...toString` would reach Object.prototype: it sees only
    // names of ours. A document it cannot be shown (an unknown or repeated name) is refused by
    // graphql-js's own rules (KnownFragmentNames, UniqueFragmentNames, UniqueOperationNames).
    const renamed = withOwnNames(context.getDocument());
    if (renamed === undefined) return {};
    // It reports through the context it is given: a view of it that shows the renamed document,
    // and whose reportError gives the refusal its code and the operation's own name back.
    const coded = Object.create(context) as ValidationContext;
    coded.getDocument = () => renamed.document;
    coded.reportError = (error) => {
      const operation = error.nodes?.[0] === undefined ? undefined : renamed.operationOf(error.message);
      const message = operation === undefined ? error.message : error.message.replace(operation.alias, operation.name);
      context.reportError(refusalError(new ServiceError('QUERY_TOO_DEEP', message, { details: { maxDepth } }), { nodes: error.nodes ?? [] }));
    };
    rule(coded);
    // Its visitor does nothing: the depth was measured above, over the whole document.
    return {};
  };
}

/** A document whose operations and fragments carry names of ours, and the way back to the client's. */
interface RenamedDocument {
  readonly document: DocumentNode;
  /** The operation a library message names (`'o0' exceeds …`), with its own name. */
  operationOf(message: string): { alias: string; name: string } | undefined;
}

/**
 * `document` with its operations named `o0`, `o1`… and its fragments `f0`, `f1`… (spreads too),
 * so that a library indexing them by name in a plain object meets no name a client chose;
 * undefined when a spread names no fragment or a name is defined twice.
 */
export function withOwnNames(document: DocumentNode): RenamedDocument | undefined {
  const fragments = new Map<string, string>();
  const operations = new Map<string, string>();
  let operationCount = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      if (fragments.has(definition.name.value)) return undefined;
      fragments.set(definition.name.value, `f${fragments.size}`);
    } else if (definition.kind === Kind.OPERATION_DEFINITION) {
      const name = definition.name?.value ?? '';
      if (operations.has(name)) return undefined;
      operations.set(name, `o${operationCount++}`);
    }
  }
  let unknown = false;
  const renamed = visit(document, {
    OperationDefinition: (node) => ({ ...node, name: { kind: Kind.NAME, value: operations.get(node.name?.value ?? '') ?? '' } }),
    FragmentDefinition: (node) => ({ ...node, name: { ...node.name, value: fragments.get(node.name.value) ?? '' } }),
    FragmentSpread: (node) => {
      const own = fragments.get(node.name.value);
      if (own === undefined) unknown = true;
      return { ...node, name: { ...node.name, value: own ?? '' } };
    },
  });
  if (unknown) return undefined;
  const byAlias = new Map([...operations].map(([name, alias]) => [alias, name]));
  return {
    document: renamed,
    operationOf: (message) => {
      const alias = /^'(o\d+)'/.exec(message)?.[1];
      const name = alias === undefined ? undefined : byAlias.get(alias);
      return alias === undefined || name === undefined ? undefined : { alias: `'${alias}'`, name: `'${name}'` };
    },
  };
}

/** Costs of recent operations per document, dropped with the document when its cache lets it go. */
const costs = new WeakMap<DocumentNode, { maxCost: number; byVariables: Map<string, number> }>();
/** Variable sets whose cost is kept per document. */
const COSTS_PER_DOCUMENT = 256;

/**
 * What the cost of an operation depends on, as a fixed-size key: a digest of its name and of the
 * values of the variables it declares. graphql-js ignores undeclared variables, so they must not
 * make a new key (nor be kept in one): a request can carry a megabyte of them.
 */
function costKey(document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): string {
  const declared = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  const values = declared.map((definition) => variables?.[definition.variable.name.value] ?? null);
  return createHash('sha256')
    .update(JSON.stringify([operationName ?? '', values]))
    .digest('base64');
}

/**
 * The cost refusal of a validated operation (`extensions.code` QUERY_TOO_COMPLEX), or undefined
 * within budget. The cost depends on the variables, so it is checked when the operation is admitted.
 */
export function checkOperationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  maxCost: number,
): GraphQLError | undefined {
  // Every transport hands the same parsed document to requests with the same query text, so the
  // cost is computed once per document and variables.
  let cached = costs.get(document);
  if (cached === undefined || cached.maxCost !== maxCost) {
    cached = { maxCost, byVariables: new Map() };
    costs.set(document, cached);
  }
  const key = costKey(document, variables, operationName);
  let cost = cached.byVariables.get(key);
  if (cost === undefined) {
    try {
      cost = operationCost(schema, document, variables, operationName);
    } catch {
      // Variables that do not coerce: execution rejects the operation with the precise reason.
      return undefined;
    }
    // Bounded: a document used with ever new variables must not grow without end (each entry is a
    // 44-character key and a number).
    if (cached.byVariables.size >= COSTS_PER_DOCUMENT) cached.byVariables.clear();
    cached.byVariables.set(key, cost);
  }
  if (cost <= maxCost) return undefined;
  return refusalError(
    new ServiceError('QUERY_TOO_COMPLEX', `Operation cost ${cost} exceeds the maximum of ${maxCost}. Ask for fewer ids or smaller pages.`, {
      details: { cost, maxCost },
    }),
  );
}

/**
 * The limit violations of an already validated operation (depth, then cost), as GraphQL errors
 * carrying QUERY_TOO_DEEP or QUERY_TOO_COMPLEX; empty when within budget. For tools and tests:
 * the transports apply the two through {@link depthRule} and {@link checkOperationCost}.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  limits: OperationLimits,
): GraphQLError[] {
  const deep = validate(schema, document, [depthRule(limits.maxDepth)]);
  if (deep.length > 0) return [...deep];
  const costly = checkOperationCost(schema, document, variables, operationName, limits.maxCost);
  return costly === undefined ? [] : [costly];
}
