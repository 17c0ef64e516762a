/**
 * Limits on the shape of an operation: aliases and directives (graphql-armor's validation rules),
 * parser tokens (graphql-js's own `maxTokens` parse option) and field suggestions (graphql-js's
 * `hideSuggestions` validation option: "Did you mean …?" would map the schema for a caller who may
 * not introspect it). One plugin of the lifecycle, so every transport applies them.
 */
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';
import { ServiceError, type ErrorCode } from '../../../base/errors.js';
import type { OperationPlugin } from '../operation-plugin.js';
import { refusalError } from '../refusal-error.js';

/** Budgets of an operation's shape. */
export interface ShapeLimits {
  readonly maxAliases: number;
  readonly maxDirectives: number;
  readonly maxTokens: number;
  /** Whether validation errors may suggest similar field names. */
  readonly fieldSuggestions: boolean;
}

/** The shape limits as a plugin: the parser's token budget, the alias and directive rules, suggestions hidden unless allowed. */
export function shapeLimitsPlugin(limits: ShapeLimits): OperationPlugin {
  return {
    name: 'shape-limits',
    parseOptions: { maxTokens: limits.maxTokens },
    validationRules: shapeLimitRules(limits),
    validationOptions: { hideSuggestions: !limits.fieldSuggestions },
  };
}

/** The validation rules enforcing the alias and directive budgets of `limits`. */
export function shapeLimitRules(limits: ShapeLimits): ValidationRule[] {
  // graphql-armor's rules throw out of validation by default, which would end the whole request
  // (and close a WebSocket); reported instead, the refusal is one more validation error.
  const report = (code: ErrorCode, limit: Record<string, number>) => (context: ValidationContext | null, error: GraphQLError) => {
    context?.reportError(shapeRefusal(error, code, limit));
  };
  return [
    // No field is exempt: graphql-armor exempts `__typename` by default, and a hundred aliases of
    // it are a scanner's amplification probe, never a client's need.
    maxDirectivesRule({
      n: limits.maxDirectives,
      propagateOnRejection: false,
      onReject: [report('QUERY_TOO_MANY_DIRECTIVES', { maxDirectives: limits.maxDirectives })],
    }),
    maxAliasesRule({
      n: limits.maxAliases,
      allowList: [],
      propagateOnRejection: false,
      onReject: [report('QUERY_TOO_MANY_ALIASES', { maxAliases: limits.maxAliases })],
    }),
  ];
}

/** graphql-js's message when a document has more tokens than `maxTokens` allows. */
const TOKEN_LIMIT = /^Syntax Error: Document contains more that (\d+) tokens\. Parsing aborted\.$/;

/** The token limit's refusal for a parse error that is one, else undefined. */
export function tokenLimitRefusal(error: { readonly message: string }): { message: string; extensions: Record<string, unknown> } | undefined {
  const match = TOKEN_LIMIT.exec(error.message);
  if (match === null) return undefined;
  const maxTokens = Number(match[1]);
  return { message: `Token limit of ${maxTokens} exceeded.`, extensions: { code: 'QUERY_TOO_MANY_TOKENS' satisfies ErrorCode, maxTokens } };
}

function shapeRefusal(error: GraphQLError, code: ErrorCode, limit: Record<string, number>): GraphQLError {
  // graphql-armor words every refusal as a syntax error; these are not.
  const message = error.message.replace(/^Syntax Error: /, '');
  return refusalError(new ServiceError(code, message, { details: limit }), { nodes: error.nodes ?? [] });
}
