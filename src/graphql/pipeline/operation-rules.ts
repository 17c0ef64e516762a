/**
 * The rules every GraphQL operation passes before it runs, defined once for the three transports:
 * Apollo Server takes them through its options (`parseOptions`, `validationRules`,
 * `validationOptions`) and one plugin (`didResolveOperation` calls {@link OperationRules.admit});
 * the graphql-ws and graphql-sse bindings apply the same values through `prepare-operation.ts`.
 *
 * - Parse: the token budget (graphql-js's `maxTokens`).
 * - Validation (depends on the document alone, so its result is kept per document): graphql-js's
 *   rules, the introspection switch, depth, aliases and directives; suggestions hidden where
 *   configured; at most {@link MAX_VALIDATION_ERRORS} errors per document.
 * - Admission (depends on the caller and the variables, so it runs for every operation): no
 *   subscription over plain HTTP, the caller's scope, and the cost budget.
 *
 * Every refusal carries its own `extensions.code` and the HTTP status it answers with.
 */
import { GraphQLError, NoSchemaIntrospectionCustomRule, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type ParseOptions, type ValidationRule } from 'graphql';
import type { AccessPolicy } from '../../auth/access.js';
import { InsufficientScopeError, bearerChallenge } from '../../auth/auth-error.js';
import type { Principal } from '../../auth/principal.js';
import { ServiceError, type ErrorCode } from '../../base/errors.js';
import { checkOperationCost, depthRule, type OperationLimits } from './operation-limits.js';
import { shapeLimitRules, type ShapeLimits } from './shape-limits.js';
import { refusalError } from './refusal-error.js';

/** How an operation reached the service. */
export type Transport = 'http' | 'websocket' | 'sse';

/**
 * Errors one invalid document may produce: ten unknown directives would otherwise answer with ten
 * errors (error amplification). graphql-js adds one last error saying validation stopped.
 */
export const MAX_VALIDATION_ERRORS = 5;

/** Options of {@link createOperationRules}. */
export interface OperationRulesOptions {
  readonly schema: GraphQLSchema;
  readonly access: AccessPolicy;
  readonly limits: OperationLimits;
  readonly shapeLimits: ShapeLimits;
  /** Whether the schema may be introspected (GraphQL IDEs need it); also governs a subgraph's `_service`. */
  readonly introspection: boolean;
  /**
   * Trusted documents are on: a federated subgraph then refuses `_entities` and `_service`, since a
   * gateway's query plans are documents no manifest lists (see docs/api.md, "Federation").
   */
  readonly trustedDocuments?: boolean;
}

/** A validated operation, about to be admitted. */
export interface OperationToAdmit {
  readonly document: DocumentNode;
  /** The operation to run, as `getOperationAST` found it (undefined when the document names none). */
  readonly operation: OperationDefinitionNode | null | undefined;
  readonly operationName: string | null | undefined;
  readonly variables: Record<string, unknown> | null | undefined;
  readonly principal: Principal;
  readonly transport: Transport;
}

/** The rules, as values every transport applies. */
export interface OperationRules {
  readonly parseOptions: ParseOptions;
  /** The rules beyond graphql-js's `specifiedRules`. */
  readonly validationRules: readonly ValidationRule[];
  readonly validationOptions: { readonly maxErrors: number; readonly hideSuggestions: boolean };
  /** The first reason not to run a valid operation, if any. */
  admit(request: OperationToAdmit): GraphQLError | undefined;
}

/** Creates the rules for `options`. */
export function createOperationRules(options: OperationRulesOptions): OperationRules {
  const { schema, access, limits, shapeLimits } = options;
  return {
    parseOptions: { maxTokens: shapeLimits.maxTokens },
    validationRules: [
      // graphql-js's rule rather than Apollo's `introspection: false`: that one adds a rule on HTTP
      // alone, worded for Apollo Server's configuration; this one is the same on every transport.
      ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule]),
      ...federationFieldsRules(options),
      depthRule(limits.maxDepth),
      ...shapeLimitRules(shapeLimits),
    ],
    validationOptions: { maxErrors: MAX_VALIDATION_ERRORS, hideSuggestions: !shapeLimits.fieldSuggestions },
    admit(request) {
      const { operation } = request;
      if (operation == null) {
        return refused('Unable to identify the operation to run: name one of the document\'s operations in "operationName".', 'BAD_USER_INPUT');
      }
      if (operation.operation === 'subscription' && request.transport === 'http') {
        return refused('Subscriptions are served over WebSocket (the graphql-ws protocol) or SSE (Accept: text/event-stream) on this same path.', 'BAD_USER_INPUT');
      }
      try {
        access.requireScope(request.principal, access.scopeFor(operation.operation));
      } catch (error) {
        if (!(error instanceof InsufficientScopeError)) throw error;
        return refusalError(error, { headers: new Map([['www-authenticate', bearerChallenge(error) as string]]) });
      }
      return checkOperationCost(schema, request.document, request.variables ?? undefined, request.operationName ?? undefined, limits.maxCost);
    },
  };
}

/**
 * The subgraph fields a configuration refuses: `_service { sdl }` reveals the whole schema, so it
 * follows the introspection switch; with trusted documents both federation fields are refused.
 * Without `FEDERATION=on` the schema has neither field and the rule never reports.
 */
function federationFieldsRules(options: OperationRulesOptions): ValidationRule[] {
  const refusedFields = new Map<string, string>();
  if (options.trustedDocuments === true) {
    const message = 'Only trusted documents run here, and a federation gateway\'s query plans are not among them: this subgraph serves no gateway while GRAPHQL_TRUSTED_DOCUMENTS is set.';
    refusedFields.set('_entities', message).set('_service', message);
  } else if (!options.introspection) {
    refusedFields.set('_service', 'GraphQL introspection has been disabled, and "_service" reveals the schema as introspection does.');
  }
  if (refusedFields.size === 0) return [];
  const rule: ValidationRule = (context) => ({
    Field(node) {
      const message = refusedFields.get(node.name.value);
      // Fragments included: the parent type is Query wherever the field is selected from it. A
      // schema without the field (FEDERATION off) leaves the refusal to graphql-js's own rule.
      const query = context.getSchema().getQueryType();
      if (message === undefined || query == null || context.getParentType() !== query || query.getFields()[node.name.value] === undefined) return;
      context.reportError(refusalError(new ServiceError('GRAPHQL_VALIDATION_FAILED', message), { nodes: [node] }));
    },
  });
  return [rule];
}

function refused(message: string, code: ErrorCode): GraphQLError {
  return refusalError(new ServiceError(code, message));
}
