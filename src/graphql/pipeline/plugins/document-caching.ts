/**
 * Parsed and validated documents kept for the next operation with the same text, on every
 * transport: the parse phase answers a text it saw before with the document it parsed then (from
 * `../document-cache.ts`, bounded by the bytes a document really holds), and the validate phase
 * answers that document with the errors it had (validation depends on the document alone). Equal
 * texts so share one document, which lets the shared subscription execution
 * (`../../fanout/shared-results.ts`) tell equal operations apart by identity rather than by text.
 * A text that does not parse is not kept: its error holds the whole text.
 */
import { GraphQLError, type DocumentNode } from 'graphql';
import { createDocumentCache } from '../document-cache.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** The default of `GRAPHQL_DOCUMENT_CACHE_MAX_BYTES`. */
export const DEFAULT_DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;

/** The plugin, keeping at most `maxBytes` of parsed documents (none with 0). */
export function documentCachingPlugin(maxBytes: number = DEFAULT_DOCUMENT_CACHE_BYTES): OperationPlugin {
  const documents = createDocumentCache(maxBytes);
  // Weakly: a document's errors go with it when the cache drops it.
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  return {
    name: 'document-caching',
    onParse(text) {
      const kept = documents.get(text);
      if (kept !== undefined) return { kept };
      return {
        done: (result) => {
          if (!(result instanceof GraphQLError)) documents.set(text, result);
        },
      };
    },
    onValidate(document) {
      const kept = validated.get(document);
      if (kept !== undefined) return { kept };
      return { done: (errors) => void validated.set(document, errors) };
    },
  };
}
