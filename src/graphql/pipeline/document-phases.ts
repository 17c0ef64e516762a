/**
 * The parse and validate phases of the operation lifecycle, between the plugins' hooks (envelop's
 * shape): each plugin's `onParse` / `onValidate` runs before its phase and may answer with a result
 * it kept (the phase then does not run: the first kept result wins), and every `done` they returned
 * runs after it, in the plugins' order, with the result the phase ended with, run or kept (a kept
 * result is answered as the plugin kept it: a plugin keeps what the phase answered, coded). The
 * hooks keep and follow; they never refuse (validation rules and `onAdmit` do), so one that throws
 * is reported and skipped, and the operation goes on as if the plugin had not hooked the phase.
 */
import { GraphQLError, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import type { ErrorCode } from '../../base/errors.js';
import type { OperationPlugin, PhaseHooks } from './operation-plugin.js';
import type { ObserverFailure } from './plugin-observers.js';

/** The two phases, as the lifecycle runs them. */
export interface DocumentPhases {
  /** A document's text parsed with the plugins' options, or the `GRAPHQL_PARSE_FAILED` error. */
  parse(text: string): DocumentNode | GraphQLError;
  /** A document's validation errors, each coded `GRAPHQL_VALIDATION_FAILED` by the phase or kept so (none: valid). */
  validate(document: DocumentNode): readonly GraphQLError[];
}

/** Options of {@link createDocumentPhases}. */
export interface DocumentPhasesOptions {
  readonly schema: GraphQLSchema;
  readonly plugins: readonly OperationPlugin[];
  readonly parseOptions: ParseOptions;
  /** The plugins' rules, beyond graphql-js's `specifiedRules`. */
  readonly validationRules: readonly ValidationRule[];
  readonly validationOptions: { readonly maxErrors: number; readonly hideSuggestions: boolean };
  readonly failed: ObserverFailure;
}

type Hook<In, Kept, Result> = { readonly plugin: string; readonly before: (input: In) => PhaseHooks<Kept, Result> | undefined };

/** Composes the plugins' parse and validate hooks around graphql-js's `parse` and `validate`. */
export function createDocumentPhases(options: DocumentPhasesOptions): DocumentPhases {
  const { schema, plugins, parseOptions, validationOptions, failed } = options;
  const allRules = [...specifiedRules, ...options.validationRules];
  const onParse = plugins.flatMap((plugin) => (plugin.onParse ? [{ plugin: plugin.name, before: plugin.onParse.bind(plugin) }] : []));
  const onValidate = plugins.flatMap((plugin) => (plugin.onValidate ? [{ plugin: plugin.name, before: plugin.onValidate.bind(plugin) }] : []));

  const parsed = (text: string): DocumentNode | GraphQLError => {
    try {
      return parse(text, parseOptions);
    } catch (error) {
      return withCode(error instanceof GraphQLError ? error : new GraphQLError(String(error)), 'GRAPHQL_PARSE_FAILED');
    }
  };
  const validated = (document: DocumentNode): readonly GraphQLError[] =>
    validate(schema, document, allRules, validationOptions).map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));

  return {
    parse: (text) => phase(onParse, 'onParse', text, parsed, failed),
    validate: (document) => phase(onValidate, 'onValidate', document, validated, failed),
  };
}

/** One phase: the hooks before, the first kept result or the phase's own, the hooks after. */
function phase<In, Kept extends Result, Result>(
  hooks: ReadonlyArray<Hook<In, Kept, Result>>,
  name: string,
  input: In,
  run: (input: In) => Result,
  failed: ObserverFailure,
): Result {
  // The common case, no plugin hooks the phase: nothing allocated.
  if (hooks.length === 0) return run(input);
  let kept: Kept | undefined;
  let after: Array<{ plugin: string; done: (result: Result) => void }> | undefined;
  for (const hook of hooks) {
    try {
      const returned = hook.before(input);
      if (returned === undefined) continue;
      if (kept === undefined && returned.kept !== undefined) kept = returned.kept;
      if (returned.done !== undefined) (after ??= []).push({ plugin: hook.plugin, done: returned.done.bind(returned) });
    } catch (error) {
      failed(hook.plugin, name, error);
    }
  }
  const result = kept !== undefined ? kept : run(input);
  for (const { plugin, done } of after ?? []) {
    try {
      done(result);
    } catch (error) {
      failed(plugin, `${name} done`, error);
    }
  }
  return result;
}

/** `error` with `code`, unless it has a code of its own; a copy, since graphql-js shares some errors. */
export function withCode(error: GraphQLError, code: ErrorCode): GraphQLError {
  if (typeof error.extensions.code === 'string') return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    extensions: { ...error.extensions, code },
  });
}
