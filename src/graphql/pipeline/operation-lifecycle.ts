/**
 * The one operation lifecycle, run over the plugins (`operation-plugin.ts`, listed in
 * `plugins/index.ts`) for every transport: start → resolve the document → parse → validate →
 * admit → context → execute or subscribe → format errors.
 *
 * Every transport runs the steps up to the context through {@link OperationLifecycle.prepare}:
 * graphql-ws, graphql-sse, the multipart protocol, and plain HTTP, whose endpoint prepares an
 * operation before Apollo Server sees it and hands Apollo the prepared document, which it neither
 * parses nor validates again (`../http/apollo-server.ts`). Each step's rules are the plugins',
 * written once; parse and validate run between the plugins' hooks (`document-phases.ts`), where
 * one plugin keeps parsed and validated documents for every transport. Every
 * transport executes a query or mutation through {@link OperationLifecycle.execute}, Apollo Server
 * too (its executor), so the plugins' execute hooks see every result before it is sent.
 */
import {
  GraphQLError,
  execute,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import type { Principal } from '../../auth/principal.js';
import { ServiceError } from '../../base/errors.js';
import { createDocumentPhases, withCode } from './document-phases.js';
import type {
  Arrival,
  ArrivingOperation,
  EventObserver,
  OperationContext,
  OperationPlugin,
  OperationRequest,
  OperationStart,
  OperationToAdmit,
  PreparedOperation,
  ReceivedOperation,
  Refusal,
} from './operation-plugin.js';
import { composeArrivals, composeEventObservers, composeExecutions, type ObserverFailure } from './plugin-observers.js';
import { refusalError } from './refusal-error.js';

/**
 * Errors one invalid document may produce unless a plugin asks for fewer: ten unknown directives
 * would otherwise answer with ten errors (error amplification). graphql-js adds one last error
 * saying validation stopped.
 */
export const MAX_VALIDATION_ERRORS = 5;

/** The lifecycle, as the transports' adapters use it. */
export interface OperationLifecycle {
  readonly parseOptions: ParseOptions;
  /** The plugins' rules, beyond graphql-js's `specifiedRules`. */
  readonly validationRules: readonly ValidationRule[];
  readonly validationOptions: { readonly maxErrors: number; readonly hideSuggestions: boolean };
  /** Starts what the plugins need running (`onServiceStart`), before the service serves. */
  startPlugins(): Promise<void>;
  /** Stops it (`onServiceStop`), once the transports drained. */
  stopPlugins(): Promise<void>;
  /** Step 0, HTTP only: an answer a plugin kept for the request. */
  arrive(operation: ArrivingOperation): Arrival;
  /** Step 1: the first refusal of the plugins' `onStart`, if any. */
  start(start: OperationStart): Promise<GraphQLError | undefined>;
  /** Step 2: the request with its document's text in `query`, or why it is refused. */
  resolve(request: OperationRequest): OperationRequest | GraphQLError;
  /** Step 3: the text's document (kept by a plugin, or parsed), or why it does not parse. */
  parse(text: string): DocumentNode | GraphQLError;
  /** Step 4: the document's validation errors (none: valid). */
  validate(document: DocumentNode): readonly GraphQLError[];
  /** Step 5: the first reason not to run a valid operation, if any. */
  admit(operation: OperationToAdmit): GraphQLError | undefined;
  /** Every step up to the context: execution arguments, or the errors the operation is refused with. */
  prepare(operation: ReceivedOperation): Promise<PreparedOperation | GraphQLError[]>;
  /**
   * Step 7, a query or mutation: executes what `prepare` answered (with its context: HTTP's is its
   * endpoint's), between the plugins' `onExecute` and the hooks they returned.
   */
  execute(prepared: PreparedOperation): Promise<ExecutionResult>;
  /** A subscription event about to be pushed: the plugins' observers of it, as one (undefined when none follows it). */
  observeEvent(event: unknown): EventObserver | undefined;
  /** The last step: an error as a client receives it (Apollo Server's `formatError` signature). */
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

/** Options of {@link createOperationLifecycle}. */
export interface OperationLifecycleOptions {
  readonly schema: GraphQLSchema;
  readonly plugins: readonly OperationPlugin[];
  /** The context of an operation (step 6); HTTP's is made by its endpoint, for Apollo Server. */
  readonly createContext: (principal: Principal, resumeAfter: string | undefined) => unknown;
  /**
   * Told of a hook that keeps or observes and threw (`arrive`, `onParse`, `onValidate`, `onExecute`,
   * `onEvent`, and what they returned): it is skipped for that operation (an event's observer is
   * dropped for the rest of the event), and the operation goes on.
   */
  readonly observerFailed: ObserverFailure;
}

/** Composes the plugins into the lifecycle, once per process. */
export function createOperationLifecycle(options: OperationLifecycleOptions): OperationLifecycle {
  const { plugins } = options;
  const parseOptions: ParseOptions = Object.assign({}, ...plugins.map((plugin) => plugin.parseOptions ?? {}));
  const validationRules = plugins.flatMap((plugin) => plugin.validationRules ?? []);
  const validationOptions = {
    maxErrors: Math.min(MAX_VALIDATION_ERRORS, ...plugins.map((plugin) => plugin.validationOptions?.maxErrors ?? Infinity)),
    hideSuggestions: plugins.some((plugin) => plugin.validationOptions?.hideSuggestions === true),
  };
  const starts = plugins.flatMap((plugin) => (plugin.onStart ? [plugin.onStart.bind(plugin)] : []));
  const resolvers = plugins.flatMap((plugin) => (plugin.resolveDocument ? [plugin.resolveDocument.bind(plugin)] : []));
  const admissions = plugins.flatMap((plugin) => (plugin.onAdmit ? [plugin.onAdmit.bind(plugin)] : []));
  const formatters = plugins.flatMap((plugin) => (plugin.formatError ? [plugin.formatError.bind(plugin)] : []));
  const phases = createDocumentPhases({ ...options, parseOptions, validationRules, validationOptions, failed: options.observerFailed });

  const lifecycle: Omit<OperationLifecycle, 'prepare' | 'execute'> = {
    parseOptions,
    validationRules,
    validationOptions,
    async startPlugins() {
      await Promise.all(plugins.map((plugin) => plugin.onServiceStart?.()));
    },
    async stopPlugins() {
      await Promise.all(plugins.map((plugin) => plugin.onServiceStop?.()));
    },
    arrive: composeArrivals(plugins, options.observerFailed),
    async start(start) {
      for (const onStart of starts) {
        const refusal = await onStart(start);
        if (refusal !== undefined) return asRefusal(refusal);
      }
      return undefined;
    },
    resolve(request) {
      try {
        return resolvers.reduce((resolved, resolveDocument) => resolveDocument(resolved), request);
      } catch (error) {
        if (error instanceof GraphQLError || error instanceof ServiceError) return asRefusal(error);
        throw error;
      }
    },
    parse: phases.parse,
    validate: phases.validate,
    admit(operation) {
      for (const onAdmit of admissions) {
        const refusal = onAdmit(operation);
        if (refusal !== undefined) return asRefusal(refusal);
      }
      return undefined;
    },
    observeEvent: composeEventObservers(plugins, options.observerFailed),
    formatError: (formatted, error) => formatters.reduce((shown, format) => format(shown, error), formatted),
  };
  return { ...lifecycle, prepare: createPreparer(options, lifecycle), execute: createExecutor(options) };
}

/** The execute step: graphql-js's `execute`, between the plugins' hooks. */
function createExecutor(options: OperationLifecycleOptions): OperationLifecycle['execute'] {
  const follow = composeExecutions(options.plugins, options.observerFailed);
  return async (prepared) => {
    const { operation } = prepared;
    // Prepared operations name one (`prepare` refuses any other); graphql-js answers that case itself.
    const done = operation == null ? undefined : follow({ prepared, operation, context: prepared.contextValue as OperationContext });
    const result = await execute(prepared);
    return done === undefined ? result : done(result);
  };
}

/** The run of the steps up to the context. */
function createPreparer(options: OperationLifecycleOptions, lifecycle: Omit<OperationLifecycle, 'prepare' | 'execute'>): OperationLifecycle['prepare'] {
  const { schema } = options;
  return async (received) => {
    const { principal, transport, params, resumeAfter, method } = received;
    const refused = await lifecycle.start({ principal, transport });
    if (refused !== undefined) return [refused];
    const resolved = lifecycle.resolve(params);
    if (resolved instanceof GraphQLError) return [resolved];
    if (typeof resolved.query !== 'string' || resolved.query === '') return [asRefusal(noDocument())];
    const document = lifecycle.parse(resolved.query);
    if (document instanceof GraphQLError) return [document];
    const invalid = lifecycle.validate(document);
    if (invalid.length > 0) return [...invalid];
    const operationName = resolved.operationName ?? null;
    const variables = resolved.variables ?? null;
    const operation = getOperationAST(document, operationName);
    if (method === 'GET' && operation != null && operation.operation !== 'query') return [getRefusal(operation.operation)];
    const refusal = lifecycle.admit({
      document,
      operation,
      operationName,
      variables,
      extensions: resolved.extensions ?? null,
      principal,
      transport,
    });
    if (refusal !== undefined) return [refusal];
    const coerced = getVariableValues(schema, operation?.variableDefinitions ?? [], variables ?? {}, { maxErrors: lifecycle.validationOptions.maxErrors });
    if (coerced.errors !== undefined) return coerced.errors.map((error) => withCode(error, 'BAD_USER_INPUT'));
    // HTTP's context is its endpoint's (made for Apollo Server, which runs the operation).
    const contextValue = transport === 'http' ? undefined : options.createContext(principal, resumeAfter);
    return { schema, document, variableValues: variables, operationName, contextValue, query: resolved.query, operation, received };
  };
}

/** The refusal of a request with neither a document nor the id of one. */
const noDocument = () => new ServiceError('BAD_REQUEST', 'GraphQL operations must contain a non-empty `query` or a `documentId`.');

/** The refusal of an operation other than a query sent with GET (405, `Allow: POST`), worded as Apollo Server words it. */
function getRefusal(type: string): GraphQLError {
  const error = new ServiceError('METHOD_NOT_ALLOWED', `GET requests only support query operations, not ${type} operations.`);
  return refusalError(error, { headers: new Map([['allow', 'POST']]) });
}

/** A hook's refusal as the GraphQL error every transport answers with. */
function asRefusal(refusal: Refusal): GraphQLError {
  return refusal instanceof ServiceError ? refusalError(refusal) : refusal;
}
