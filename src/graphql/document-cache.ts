/**
 * A bounded cache of parsed and validated operations, keyed by query text. Least recently used
 * entries go first, so a client sending endless distinct queries cannot grow it without bound.
 */
import type { DocumentNode, GraphQLError } from 'graphql';

/** A parsed, valid document, or the errors that make the query unusable. */
export type ParsedOperation = { readonly document: DocumentNode; readonly errors?: undefined } | { readonly errors: readonly GraphQLError[]; readonly document?: undefined };

/** The cache; `get` parses and validates on a miss. */
export interface DocumentCache {
  get(query: string): ParsedOperation;
  readonly size: number;
}

/** Creates a {@link DocumentCache} holding at most `capacity` queries. */
export function createDocumentCache(capacity: number, prepare: (query: string) => ParsedOperation): DocumentCache {
  // Map iteration is insertion order; re-inserting on a hit keeps the least recently used first.
  const entries = new Map<string, ParsedOperation>();
  return {
    get(query) {
      const hit = entries.get(query);
      if (hit !== undefined) {
        entries.delete(query);
        entries.set(query, hit);
        return hit;
      }
      const prepared = prepare(query);
      entries.set(query, prepared);
      if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
      return prepared;
    },
    get size() {
      return entries.size;
    },
  };
}
