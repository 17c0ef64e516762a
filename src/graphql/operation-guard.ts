/**
 * What every operation must pass before it runs, on HTTP, WebSocket and SSE alike, as one step of the
 * shared operation pipeline: parse errors get their code, validation (with the introspection switch)
 * is cached per parsed document, and a valid document is then checked for an operation to run, the
 * caller's scope, and the depth and cost budgets. Every refusal is a validation error with its own
 * `extensions.code` (and the HTTP status it answers with), so nothing executes.
 */
import { GraphQLError, NoSchemaIntrospectionCustomRule, getOperationAST, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { AccessPolicy } from '../auth/access.js';
import { InsufficientScopeError, bearerChallenge } from '../auth/auth-error.js';
import type { Principal } from '../auth/principal.js';
import type { ErrorCode } from '../errors.js';
import { checkOperationLimits, type OperationLimits } from './limits.js';

/** How an operation reached the service. */
export type Transport = 'http' | 'websocket' | 'sse';

/** What each transport puts in the pipeline's initial context. */
export interface OperationSource {
  /** The verified caller. */
  readonly principal: Principal;
  readonly transport: Transport;
  /** The cursor a reconnecting SSE client last received (`Last-Event-ID`), which a subscription resumes after. */
  readonly resumeAfter?: string | undefined;
}

/** The request's operation name and variables, as the pipeline's initial context holds them. */
interface RequestParams {
  readonly params?: { readonly operationName?: string | null; readonly variables?: Record<string, unknown> | null };
}

/** Options of {@link useOperationGuard}. */
export interface OperationGuardOptions {
  readonly schema: GraphQLSchema;
  readonly access: AccessPolicy;
  readonly limits: OperationLimits;
  /** Whether the schema may be introspected (GraphQL IDEs need it). */
  readonly introspection: boolean;
}

/** The guard as a pipeline plugin. */
export function useOperationGuard(options: OperationGuardOptions): Plugin<OperationSource & RequestParams> {
  // Standard validation depends on the document alone (the rules never change), so its result is
  // kept with the document; the checks below depend on the caller and the variables, and run
  // every time (the limits keep their own per-document results).
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  return {
    onParse() {
      return ({ result }) => {
        if (result instanceof GraphQLError) refusedWith(result, 'GRAPHQL_PARSE_FAILED', 400);
      };
    },
    onValidate({ params: { documentAST }, context, addValidationRule, setResult }) {
      const known = validated.get(documentAST);
      if (known !== undefined) setResult(known);
      else if (!options.introspection) addValidationRule(NoSchemaIntrospectionCustomRule);
      return ({ result, setResult: replace }) => {
        if (known === undefined) {
          // Validation reports GraphQLErrors only.
          const errors = result as readonly GraphQLError[];
          for (const error of errors) refusedWith(error, 'GRAPHQL_VALIDATION_FAILED', 400);
          validated.set(documentAST, errors);
        }
        if (result.length > 0) return;
        const refusal = check(options, context, documentAST);
        if (refusal !== undefined) replace([refusal]);
      };
    },
  };
}

/** The first reason not to run a valid document, if any. */
function check(options: OperationGuardOptions, context: OperationSource & RequestParams, document: DocumentNode): GraphQLError | undefined {
  const operationName = context.params?.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  if (operation == null) {
    return refused('Unable to identify the operation to run: name one of the document\'s operations in "operationName".', 'BAD_USER_INPUT', 400);
  }
  if (operation.operation === 'subscription' && context.transport === 'http') {
    return refused('Subscriptions are served over WebSocket (the graphql-ws protocol) or SSE (Accept: text/event-stream) on this same path.', 'BAD_USER_INPUT', 400);
  }
  try {
    options.access.requireScope(context.principal, options.access.scopeFor(operation.operation));
  } catch (error) {
    if (!(error instanceof InsufficientScopeError)) throw error;
    return new GraphQLError(error.message, {
      extensions: { ...error.extensions, http: { status: 403, headers: { 'www-authenticate': bearerChallenge(error) as string } } },
    });
  }
  const [overBudget] = checkOperationLimits(options.schema, document, context.params?.variables ?? undefined, operationName, options.limits);
  if (overBudget !== undefined) return refusedWith(overBudget, overBudget.extensions.code as ErrorCode, 400);
  return undefined;
}

function refused(message: string, code: ErrorCode, status: number): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status } } });
}

/** Gives a refusal its code (unless it has one) and HTTP status; in place, as the error is cached. */
function refusedWith(error: GraphQLError, code: ErrorCode, status: number): GraphQLError {
  const extensions = error.extensions as Record<string, unknown>;
  extensions.code ??= code;
  extensions.http ??= { status };
  return error;
}
