/**
 * The first steps of an operation on the streaming transports (graphql-ws and graphql-sse), which
 * Apollo Server takes for HTTP: resolve the document (trusted documents, APQ), parse it (cached by
 * a digest of the text, bounded in bytes, so equal queries share one document, which the shared
 * subscription execution relies on),
 * validate it (cached per document), admit it, and create its context. The values applied are the
 * operation rules' (`operation-rules.ts`), the very ones Apollo Server is given.
 */
import { GraphQLError, getOperationAST, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import type { Principal } from '../../auth/principal.js';
import type { ErrorCode } from '../../base/errors.js';
import type { DocumentCache } from './document-cache.js';
import type { OperationRules, Transport } from './operation-rules.js';
import type { OperationRequest, ResolveOperation } from './persisted-operations.js';

/** One operation as a streaming transport received it. */
export interface StreamedOperation {
  readonly principal: Principal;
  readonly transport: Exclude<Transport, 'http'>;
  /** The request's parameters, before its document is resolved. */
  readonly params: OperationRequest;
  /** The cursor a reconnecting SSE client last received (`Last-Event-ID`). */
  readonly resumeAfter?: string | undefined;
}

/** Prepares an operation: its execution arguments, or the errors it is refused with. */
export type PrepareOperation = (operation: StreamedOperation) => ExecutionArgs | GraphQLError[];

/** Options of {@link createOperationPreparer}. */
export interface PrepareOperationOptions {
  readonly schema: GraphQLSchema;
  readonly rules: OperationRules;
  readonly resolveOperation: ResolveOperation;
  readonly createContext: (principal: Principal, resumeAfter: string | undefined) => unknown;
  /** Where parsed documents are kept, bounded in bytes (document-cache.ts). */
  readonly documents: DocumentCache;
}

/** Creates the preparer, with its validation cache (the parse cache is `options.documents`). */
export function createOperationPreparer(options: PrepareOperationOptions): PrepareOperation {
  const { schema, rules, documents } = options;
  const validated = new WeakMap<DocumentNode, GraphQLError[]>();
  const allRules = [...specifiedRules, ...rules.validationRules];

  // Documents that parse are kept (equal texts then share one document, which the shared
  // subscription execution relies on); a failure is not: its error holds the whole text.
  const parseCached = (query: string): DocumentNode | GraphQLError => {
    const kept = documents.get(query);
    if (kept !== undefined) return kept;
    let document: DocumentNode;
    try {
      document = parse(query, rules.parseOptions);
    } catch (error) {
      return coded(error instanceof GraphQLError ? error : new GraphQLError(String(error)), 'GRAPHQL_PARSE_FAILED');
    }
    documents.set(query, document);
    return document;
  };

  const validateCached = (document: DocumentNode): GraphQLError[] => {
    let errors = validated.get(document);
    if (errors === undefined) {
      errors = validate(schema, document, allRules, rules.validationOptions).map((error) => coded(error, 'GRAPHQL_VALIDATION_FAILED'));
      validated.set(document, errors);
    }
    return errors;
  };

  return ({ principal, transport, params, resumeAfter }) => {
    let query: string | undefined;
    try {
      query = options.resolveOperation(params).query;
    } catch (error) {
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const document = parseCached(query ?? '');
    if (document instanceof GraphQLError) return [document];
    const invalid = validateCached(document);
    if (invalid.length > 0) return invalid;
    const operationName = params.operationName ?? null;
    const variables = params.variables ?? null;
    const refusal = rules.admit({ document, operation: getOperationAST(document, operationName), operationName, variables, principal, transport });
    if (refusal !== undefined) return [refusal];
    return { schema, document, variableValues: variables, operationName, contextValue: options.createContext(principal, resumeAfter) };
  };
}

/** A copy of `error` with `code` unless it has a code of its own (graphql-js shares some errors). */
function coded(error: GraphQLError, code: ErrorCode): GraphQLError {
  if (typeof error.extensions.code === 'string') return error;
  return new GraphQLError(error.message, { nodes: error.nodes ?? null, source: error.source ?? null, positions: error.positions ?? null, extensions: { ...error.extensions, code } });
}
