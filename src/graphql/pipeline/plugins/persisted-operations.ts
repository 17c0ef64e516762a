/**
 * Operations named by id instead of text: trusted documents (only the manifest's operations run)
 * and automatic persisted queries (APQ). One function, {@link createOperationResolver}, turns a
 * request's parameters into the document text to run, and the lifecycle runs it before anything
 * but the budgets (`../operation-lifecycle.ts`), on every transport. What follows (parse, every
 * limit, scopes, execution) is the other plugins'.
 *
 * Why not Apollo Server's own APQ: it works over HTTP only, knows no trusted documents, and would
 * leave the socket transports running any document in trusted mode; it is switched off.
 *
 * An id arrives as `documentId` (GraphQL over HTTP's persisted documents, GraphQL Code Generator's
 * client preset) or as `extensions.persistedQuery.sha256Hash` (Apollo's APQ and persisted queries).
 */
import { GraphQLError, parse } from 'graphql';
import { ConfigError, ServiceError, type ErrorCode } from '../../../base/errors.js';
import { persistedIdKey, sha256Hex, type PersistedOperationsConfig } from '../../../config/persisted-documents.js';
import type { OperationPlugin, OperationRequest } from '../operation-plugin.js';
import { refusalError } from '../refusal-error.js';

/** The parameters to run: the request's, with the document's text in `query` and no `documentId`. */
export type ResolvedOperation<T extends OperationRequest> = Omit<T, 'documentId' | 'query'> & { readonly query: string | undefined };

/** Resolves a request's document; throws a GraphQLError with its `extensions.code` when refused. */
export type ResolveOperation = <T extends OperationRequest>(request: T) => ResolvedOperation<T>;

/**
 * The lifecycle's document resolution (see docs/api.md, "Trusted documents and automatic persisted
 * queries"). Refuses, at startup, a manifest whose documents do not parse.
 */
export function persistedOperationsPlugin(config: PersistedOperationsConfig): OperationPlugin {
  const resolveOperation = createOperationResolver(config);
  return { name: 'persisted-operations', resolveDocument: (request) => resolveOperation(request) };
}

/** Creates the resolver for `config`. */
export function createOperationResolver(config: PersistedOperationsConfig): ResolveOperation {
  if (config.trustedDocuments !== null) checkDocumentsParse(config.trustedDocuments.file, config.trustedDocuments.documents);
  const trusted = config.trustedDocuments?.documents;
  const registered = config.apq.mode === 'memory' ? createBoundedStore(config.apq.maxEntries, config.apq.maxBytes) : undefined;
  const documentFor = (request: OperationRequest): string | undefined => {
    const id = idOf(request);
    // graphql-ws requires `query` to be a string: clients that send an id send "" with it.
    const query = typeof request.query === 'string' && request.query !== '' ? request.query : undefined;
    if (trusted !== undefined) return trustedDocument(trusted, id, query);
    if (id === undefined) return query;
    if (registered === undefined) {
      // APQ off: a client that sent the text anyway is served; one that sent only a hash falls back.
      if (query !== undefined) return query;
      throw refused('PERSISTED_QUERY_NOT_SUPPORTED', 'This service keeps no persisted queries: send the document in "query".');
    }
    if (query === undefined) {
      const known = registered.get(persistedIdKey(id));
      if (known === undefined) throw refused('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound: send the document in "query" with its hash to register it.');
      return known;
    }
    if (persistedIdKey(id) !== sha256Hex(query)) throw refused('PERSISTED_QUERY_MISMATCH', 'The hash is not the SHA-256 digest of "query".');
    registered.set(persistedIdKey(id), query);
    return query;
  };
  return (request) => {
    const { documentId: _documentId, query: _query, ...rest } = request;
    return { ...rest, query: documentFor(request) };
  };
}

/** The document a trusted-documents request may run. */
function trustedDocument(documents: ReadonlyMap<string, string>, id: string | undefined, query: string | undefined): string {
  if (id === undefined) {
    throw refused(
      'PERSISTED_QUERY_ONLY',
      'Only trusted documents run here: send the document\'s id in "documentId" (or extensions.persistedQuery.sha256Hash) instead of its text.',
    );
  }
  const document = documents.get(persistedIdKey(id));
  if (document === undefined) throw refused('PERSISTED_QUERY_NOT_FOUND', 'No trusted document has this id.');
  // An APQ client retries with the text: it may come along, but must be the listed document.
  if (query !== undefined && query !== document) throw refused('PERSISTED_QUERY_MISMATCH', 'The "query" sent is not the trusted document with this id.');
  return document;
}

/** The id a request names its document by, if any; a malformed one is refused. */
function idOf(request: OperationRequest): string | undefined {
  const { documentId } = request;
  if (documentId !== undefined && documentId !== null) {
    if (typeof documentId !== 'string' || documentId === '') throw refused('BAD_USER_INPUT', '"documentId" must be a non-empty string.');
    return documentId;
  }
  const persisted = request.extensions?.persistedQuery;
  if (persisted === undefined || persisted === null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1 || typeof sha256Hash !== 'string' || sha256Hash === '') {
    throw refused('BAD_USER_INPUT', 'extensions.persistedQuery must be { "version": 1, "sha256Hash": "<hex digest>" }.');
  }
  return sha256Hash;
}

function refused(code: ErrorCode, message: string): GraphQLError {
  return refusalError(new ServiceError(code, message));
}

/**
 * Registered documents, at most `maxEntries` of them and `maxBytes` of text (counted in UTF-16
 * code units, what the strings hold): the least recently used go first (a Map keeps insertion
 * order, and a hit moves its entry to the end). A document larger than the whole budget is served
 * but not kept.
 */
function createBoundedStore(maxEntries: number, maxBytes: number) {
  const entries = new Map<string, string>();
  let size = 0;
  const remove = (key: string) => {
    size -= entries.get(key)?.length ?? 0;
    entries.delete(key);
  };
  return {
    get(key: string): string | undefined {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key: string, value: string): void {
      remove(key);
      if (value.length > maxBytes) return;
      entries.set(key, value);
      size += value.length;
      while (entries.size > maxEntries || size > maxBytes) remove(entries.keys().next().value as string);
    },
  };
}

/**
 * Refuses a manifest with a document that does not parse, at startup (a ConfigError: exit 78).
 * Here rather than in the configuration, which is read before tracing starts: loading `graphql`
 * there would hide it from the GraphQL instrumentation's loader hook.
 */
function checkDocumentsParse(file: string, documents: ReadonlyMap<string, string>): void {
  for (const [id, body] of documents) {
    try {
      parse(body);
    } catch (error) {
      throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS', `"${file}": the document of "${id}" does not parse (${(error as Error).message})`);
    }
  }
}
