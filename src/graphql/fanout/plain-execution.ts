/**
 * A subscription push answered without graphql-js's execution, when the operation allows it. With
 * one subscriber per test (the shape most tests have: the frontend that started it) nothing is
 * shared between pushes, and graphql-js's `execute` costs each push 5 µs for one field and 12 µs for
 * seven (it coerces the variables again, makes an `info` object per field and a path per value):
 * more than the rest of the push's own code. An operation whose every field below the root is read
 * from its parent (the default resolver's property read, or a resolver marked
 * `sourceOnly`) and completes without a question (object types without `isTypeOf`, no abstract
 * types, no directives, no arguments below the root) is planned once, and each push walks the plan.
 *
 * The plan answers only what graphql-js would answer without an error: at the first value it is
 * not sure of (a null where the type says non-null, a scalar its `serialize` refuses, a function, a
 * promise, an Error), it gives up and graphql-js executes the event, whose errors are then its own.
 * The resolvers it calls are pure, so calling one twice changes nothing. A push answered by the
 * plan gets no `graphql.execute` span when tracing is on (its `push` span is the lifecycle's, and
 * stays); a resolver the tracing wraps leaves its pushes to graphql-js. The result's objects are
 * made as graphql-js makes them (`Object.create(null)`, fields in the order it collects them).
 */
import {
  execute,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { isSourceOnly } from '../schema/source-only.js';

/** The plan's answer when it is not sure: graphql-js executes the event instead. */
const UNSURE: unique symbol = Symbol('unsure');
type Completion = (value: unknown) => unknown;
type Plan = (event: unknown) => ExecutionResult | undefined;

// Plans by document and operation name (undefined: the document's only operation), for the schema they were made for.
const plans = new WeakMap<DocumentNode, Map<string | undefined, { schema: GraphQLSchema; plan: Plan | undefined }>>();

/**
 * The result of `event` for the subscription of `args`, as graphql-js's `execute` would give it
 * without errors; undefined when the operation has no plan or this event leaves the plan unsure.
 * The arguments and variables are not looked at: the subscription's source stream was opened with
 * the same ones (`createSourceEventStream`), which refuses those graphql-js would.
 */
export function plainResult(args: ExecutionArgs, event: unknown): ExecutionResult | undefined {
  // A caller's own default resolver is not the one the plan reads with.
  if (args.fieldResolver !== undefined && args.fieldResolver !== null) return undefined;
  let byName = plans.get(args.document);
  if (byName === undefined) {
    byName = new Map();
    plans.set(args.document, byName);
  }
  const name = args.operationName ?? undefined;
  let planned = byName.get(name);
  if (planned === undefined || planned.schema !== args.schema) {
    planned = { schema: args.schema, plan: planOf(args) };
    byName.set(name, planned);
  }
  return planned.plan?.(event);
}

/** The result of `event` for the subscription of `args`: its plan's, or graphql-js's `execute` where the plan gives way. */
export function executeEvent(args: ExecutionArgs, event: unknown): ExecutionResult | Promise<ExecutionResult> {
  return plainResult(args, event) ?? execute({ ...args, rootValue: event });
}

function planOf(args: ExecutionArgs): Plan | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  const root = args.schema.getSubscriptionType();
  if (operation?.operation !== 'subscription' || root === null || root === undefined) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of args.document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const planner = createPlanner(args.schema, fragments);
  const fields = planner.collect(root, [operation.selectionSet]);
  const only = fields?.size === 1 ? [...fields][0] : undefined;
  if (only === undefined) return undefined;
  const [key, nodes] = only;
  // The root field's arguments were the source stream's (its subscribe); its resolve reads the event alone.
  const field = planner.field(root, nodes, true);
  if (field === undefined) return undefined;
  return (event) => {
    let value: unknown;
    try {
      value = field(event);
    } catch {
      // A getter or a resolver that throws is a field error graphql-js reports.
      return undefined;
    }
    if (value === UNSURE) return undefined;
    const data = Object.create(null) as Record<string, unknown>;
    data[key] = value;
    return { data };
  };
}

interface Planner {
  /** The fields of `sets` on `type` by response key, as graphql-js collects them; undefined when a selection has a directive or an unknown fragment. */
  collect(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): Map<string, FieldNode[]> | undefined;
  /** Reads and completes one field of `type` from its parent; undefined when it cannot be planned. */
  field(type: GraphQLObjectType, nodes: readonly FieldNode[], root?: boolean): Completion | undefined;
}

function createPlanner(schema: GraphQLSchema, fragments: ReadonlyMap<string, FragmentDefinitionNode>): Planner {
  const applies = (type: GraphQLObjectType, condition: string | undefined): boolean => {
    if (condition === undefined || condition === type.name) return true;
    const conditionType = schema.getType(condition);
    return conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
  };

  const collectInto = (type: GraphQLObjectType, set: SelectionSetNode, fields: Map<string, FieldNode[]>, seen: Set<string>): boolean => {
    for (const selection of set.selections) {
      if ((selection.directives?.length ?? 0) > 0) return false;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const same = fields.get(key);
        if (same === undefined) fields.set(key, [selection]);
        else same.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!applies(type, selection.typeCondition?.name.value)) continue;
        if (!collectInto(type, selection.selectionSet, fields, seen)) return false;
      } else {
        const name = selection.name.value;
        if (seen.has(name)) continue;
        seen.add(name);
        const fragment = fragments.get(name);
        if (fragment === undefined || (fragment.directives?.length ?? 0) > 0) return false;
        if (!applies(type, fragment.typeCondition.name.value)) continue;
        if (!collectInto(type, fragment.selectionSet, fields, seen)) return false;
      }
    }
    return true;
  };

  const planner: Planner = {
    collect(type, sets) {
      const fields = new Map<string, FieldNode[]>();
      const seen = new Set<string>();
      for (const set of sets) if (!collectInto(type, set, fields, seen)) return undefined;
      return fields;
    },
    field(type, nodes, root = false) {
      const first = nodes[0];
      if (first === undefined) return undefined;
      const name = first.name.value;
      if (name === '__typename') return () => type.name;
      if (name.startsWith('__') || (!root && nodes.some((node) => (node.arguments?.length ?? 0) > 0))) return undefined;
      const definition = type.getFields()[name];
      if (definition === undefined) return undefined;
      const complete = completion(definition.type, nodes);
      if (complete === undefined) return undefined;
      const resolve = definition.resolve;
      if (resolve !== undefined && !isSourceOnly(resolve)) return undefined;
      // A resolver replaced after the plan was made (OpenTelemetry's graphql instrumentation wraps
      // them in place to trace them) leaves the push to graphql-js, which calls the replacement.
      const read =
        resolve === undefined
          ? (parent: unknown) => (typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[name] : UNSURE)
          : (parent: unknown) => (definition.resolve === resolve ? (resolve as (parent: unknown) => unknown)(parent) : UNSURE);
      return (parent) => {
        const value = read(parent);
        return typeof value === 'function' ? UNSURE : complete(value);
      };
    },
  };

  const objectCompletion = (type: GraphQLObjectType, nodes: readonly FieldNode[]): Completion | undefined => {
    if (type.isTypeOf !== undefined && type.isTypeOf !== null) return undefined;
    const sets = nodes.flatMap((node) => (node.selectionSet === undefined ? [] : [node.selectionSet]));
    const fields = planner.collect(type, sets);
    if (fields === undefined) return undefined;
    const planned: Array<[string, Completion]> = [];
    for (const [key, fieldNodes] of fields) {
      const field = planner.field(type, fieldNodes);
      if (field === undefined) return undefined;
      planned.push([key, field]);
    }
    return (parent) => {
      const out = Object.create(null) as Record<string, unknown>;
      for (const [key, field] of planned) {
        const value = field(parent);
        if (value === UNSURE) return UNSURE;
        out[key] = value;
      }
      return out;
    };
  };

  const completion = (type: GraphQLOutputType, nodes: readonly FieldNode[]): Completion | undefined => {
    if (isNonNullType(type)) {
      const inner = completion(type.ofType, nodes);
      if (inner === undefined) return undefined;
      return (value) => {
        const completed = inner(value);
        return completed === null ? UNSURE : completed;
      };
    }
    const named = getNamedType(type);
    const exact = isListType(type)
      ? listCompletion(type.ofType, nodes)
      : isLeafType(named)
        ? leafCompletion(named.serialize.bind(named))
        : isObjectType(type)
          ? objectCompletion(type, nodes)
          : undefined;
    if (exact === undefined) return undefined;
    return (value) => {
      if (value === null || value === undefined) return null;
      if (value instanceof Error || isThenable(value)) return UNSURE;
      return exact(value);
    };
  };

  const listCompletion = (itemType: GraphQLOutputType, nodes: readonly FieldNode[]): Completion | undefined => {
    const item = completion(itemType, nodes);
    if (item === undefined) return undefined;
    return (value) => {
      if (typeof value !== 'object' || value === null || typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] !== 'function') return UNSURE;
      const out: unknown[] = [];
      for (const entry of value as Iterable<unknown>) {
        const completed = item(entry);
        if (completed === UNSURE) return UNSURE;
        out.push(completed);
      }
      return out;
    };
  };

  return planner;
}

function leafCompletion(serialize: (value: unknown) => unknown): Completion {
  return (value) => {
    try {
      const serialized = serialize(value);
      return serialized === null || serialized === undefined ? UNSURE : serialized;
    } catch {
      return UNSURE;
    }
  };
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
