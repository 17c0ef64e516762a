/**
 * Limits on the shape of an operation, from graphql-armor: aliases, directives and parser tokens,
 * and field suggestions hidden ("Did you mean …?" would map the schema for a caller who may not
 * introspect it). They are plugins of the shared pipeline, so HTTP and WebSocket apply them alike,
 * before execution, each refusal with its own `extensions.code`.
 */
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../errors.js';

/** Budgets of an operation's shape. */
export interface ShapeLimits {
  readonly maxAliases: number;
  readonly maxDirectives: number;
  readonly maxTokens: number;
  /** Whether validation errors may suggest similar field names. */
  readonly fieldSuggestions: boolean;
}

/** The pipeline plugins enforcing `limits` (graphql-armor's are envelop plugins of any context). */
export function shapeLimitPlugins(limits: ShapeLimits): Array<Plugin | ReturnType<typeof maxTokensPlugin>> {
  // graphql-armor's rules throw out of validation by default, which would end the whole request
  // (and close a WebSocket); reported instead, the refusal is one more validation error.
  const report = (code: ErrorCode, limit: Record<string, number>) => (context: ValidationContext | null, error: GraphQLError) => {
    context?.reportError(refusal(error, code, limit));
  };
  return [
    maxTokensPlugin({
      n: limits.maxTokens,
      // The parser stops at the first token past the budget: a parse failure of its own kind.
      onReject: [
        (_context, error) => {
          throw refusal(error, 'QUERY_TOO_MANY_TOKENS', { maxTokens: limits.maxTokens });
        },
      ],
    }),
    maxAliasesPlugin({ n: limits.maxAliases, propagateOnRejection: false, onReject: [report('QUERY_TOO_MANY_ALIASES', { maxAliases: limits.maxAliases })] }),
    maxDirectivesPlugin({ n: limits.maxDirectives, propagateOnRejection: false, onReject: [report('QUERY_TOO_MANY_DIRECTIVES', { maxDirectives: limits.maxDirectives })] }),
    ...(limits.fieldSuggestions ? [] : [blockFieldSuggestionsPlugin()]),
  ];
}

function refusal(error: GraphQLError, code: ErrorCode, limit: Record<string, number>): GraphQLError {
  // graphql-armor words every refusal as a syntax error; only the token limit is one.
  const message = error.message.replace(/^Syntax Error: /, '');
  return new GraphQLError(message, { nodes: error.nodes ?? [], extensions: { code, ...limit, http: { status: 400 } } });
}
