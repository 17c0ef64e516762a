/**
 * Parsed documents kept for the next request with the same text, bounded by the bytes they really
 * hold. A parsed document keeps its whole source text and every token the lexer read (comments
 * included, which the token limit does not count) through its locations, so its size is not that
 * of its AST: a document of one field under a megabyte of comment holds a megabyte. Apollo Server's
 * own store sized an entry by its AST's JSON, which leaves that out; the lifecycle's one cache, for
 * every transport, is sized here instead (Apollo Server is handed the documents it prepares and
 * keeps none), and keyed by a digest of the text, so no key is as large as a request.
 */
import { TokenKind, type DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';

/**
 * Bytes per token the lexer read: the token object (kind, offsets, line, column, value, links)
 * and, for a token of the document (not a comment), the share of AST nodes and locations it
 * stands for. Measured on V8 (Node 26), rounded up: test/unit/graphql/pipeline/document-cache.test.ts
 * checks that what is counted is at least what the heap holds.
 */
export const BYTES_PER_TOKEN = 340;
/** Bytes per comment token: the token alone (a comment makes no AST node). */
export const BYTES_PER_COMMENT = 140;

/** What a parsed document holds in memory, about: its source text (UTF-16) and its tokens. */
export function documentBytes(document: DocumentNode): number {
  const loc = document.loc;
  if (loc === undefined) return 2 * JSON.stringify(document).length;
  let bytes = 2 * loc.source.body.length;
  for (let token = loc.startToken as typeof loc.startToken | null; token !== null; token = token.next)
    bytes += token.kind === TokenKind.COMMENT ? BYTES_PER_COMMENT : BYTES_PER_TOKEN;
  return bytes;
}

/** The key of a document's text. */
export function documentTextKey(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

/** Parsed documents by text, at most `maxBytes` of them (as {@link documentBytes} counts). */
export interface DocumentCache {
  get(text: string): DocumentNode | undefined;
  set(text: string, document: DocumentNode): void;
  /** What the kept documents hold, as counted. */
  readonly bytes: number;
}

/** Documents by key, least recently used dropped first; none kept with a budget of 0. */
function sizedDocuments(maxBytes: number): {
  get(key: string): DocumentNode | undefined;
  set(key: string, document: DocumentNode): void;
  readonly bytes: number;
} {
  if (maxBytes <= 0) return { get: () => undefined, set: () => undefined, bytes: 0 };
  const cache = new LRUCache<string, DocumentNode>({ maxSize: maxBytes, sizeCalculation: (document) => Math.max(1, documentBytes(document)) });
  return {
    get: (key) => cache.get(key),
    // lru-cache keeps nothing larger than the whole budget.
    set: (key, document) => void cache.set(key, document),
    get bytes() {
      return cache.calculatedSize;
    },
  };
}

/** Creates a {@link DocumentCache} of at most `maxBytes`, keyed by a digest of the text. */
export function createDocumentCache(maxBytes: number): DocumentCache {
  const documents = sizedDocuments(maxBytes);
  return {
    get: (text) => documents.get(documentTextKey(text)),
    set: (text, document) => documents.set(documentTextKey(text), document),
    get bytes() {
      return documents.bytes;
    },
  };
}
