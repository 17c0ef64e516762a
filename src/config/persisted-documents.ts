/**
 * The persisted-operations part of the configuration: trusted documents (`GRAPHQL_TRUSTED_DOCUMENTS`,
 * a manifest of the only operations that may run) and automatic persisted queries (`GRAPHQL_APQ`).
 *
 * The manifest is read and checked here, at startup, so a deployment with a broken one never starts
 * serving: an id shaped like a SHA-256 digest (64 hex digits, optionally `sha256:`-prefixed) must
 * be the digest of its document (that every document parses is checked as the pipeline is built,
 * by `createOperationResolver`). Other ids (SHA-1, custom
 * hashes, names) are taken as opaque keys, as GraphQL Code Generator allows other hash functions.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Reader } from './reader.js';
import { ConfigError } from '../base/errors.js';

/** Operations a client may name by id instead of sending their text. */
export interface PersistedOperationsConfig {
  /** The manifest's documents by id; null when trusted-documents mode is off. */
  readonly trustedDocuments: TrustedDocuments | null;
  /** Automatic persisted queries: `off`, or registered in an in-memory LRU bounded in entries and in characters of text. */
  readonly apq: { readonly mode: 'off' | 'memory'; readonly maxEntries: number; readonly maxBytes: number };
}

/** A loaded manifest. */
export interface TrustedDocuments {
  /** Where it was read from, for logs. */
  readonly file: string;
  /** Document text by id ({@link persistedIdKey} of the manifest's id), the text exactly as the manifest holds it. */
  readonly documents: ReadonlyMap<string, string>;
}

const TRUSTED = 'GRAPHQL_TRUSTED_DOCUMENTS';

/**
 * Reads GRAPHQL_TRUSTED_DOCUMENTS, GRAPHQL_APQ, GRAPHQL_APQ_MAX_ENTRIES and GRAPHQL_APQ_MAX_BYTES. APQ is `memory` by default
 * outside production and `off` in production; with trusted documents it is off, and asking for it
 * is an error: a client registering its own documents would widen the trusted set.
 */
export function readPersistedOperations(read: Reader, production: boolean): PersistedOperationsConfig {
  const file = read.string(TRUSTED, '');
  const trustedDocuments = file === '' ? null : { file, documents: loadManifest(file) };
  const mode = read.oneOf<'off' | 'memory'>('GRAPHQL_APQ', production || trustedDocuments !== null ? 'off' : 'memory', ['off', 'memory']);
  if (mode === 'memory' && trustedDocuments !== null) {
    throw new ConfigError(
      'GRAPHQL_APQ',
      `must be off with ${TRUSTED}: automatic persisted queries would let clients add operations the manifest does not list`,
    );
  }
  return {
    trustedDocuments,
    apq: {
      mode,
      maxEntries: read.int('GRAPHQL_APQ_MAX_ENTRIES', 1000, { min: 1, max: 1_000_000 }),
      // A count alone would let large documents (up to the 1 MB request body each) hold a lot of memory.
      maxBytes: read.int('GRAPHQL_APQ_MAX_BYTES', 16 * 1024 * 1024, { min: 1024 }),
    },
  };
}

/** The SHA-256 digest of `text`, in lower-case hex (as APQ clients and manifest generators write it). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The key a document id is looked up by: a SHA-256 id in any of its spellings (`<hex>`, as Apollo
 * writes it, or `sha256:<hex>`, as the client preset and GraphQL over HTTP write it; any case) is its
 * lower-case hex digest, so a manifest of one kind serves clients of the other; other ids are kept.
 */
export function persistedIdKey(id: string): string {
  return SHA256_ID.exec(id)?.[1]?.toLowerCase() ?? id;
}

const SHA256_ID = /^(?:sha256:)?([0-9a-f]{64})$/i;

/**
 * Reads a manifest in either shape: GraphQL Code Generator's `persisted-documents.json`
 * (`{ "<id>": "<document>" }`) or Apollo's persisted query manifest
 * (`{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [{ "id", "body", … }] }`).
 */
export function loadManifest(file: string): ReadonlyMap<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(TRUSTED, `cannot read "${file}" (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(TRUSTED, `"${file}" is not JSON`);
  }
  const entries = manifestEntries(file, json);
  if (entries.length === 0) throw new ConfigError(TRUSTED, `"${file}" lists no documents`);
  const documents = new Map<string, string>();
  for (const [id, body] of entries) {
    checkEntry(file, id, body);
    documents.set(persistedIdKey(id), body);
  }
  return documents;
}

function manifestEntries(file: string, json: unknown): Array<[string, unknown]> {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ConfigError(TRUSTED, `"${file}" is neither a { "<id>": "<document>" } map nor an Apollo persisted query manifest`);
  }
  const object = json as Record<string, unknown>;
  if (object.format === undefined) return Object.entries(object);
  if (object.format !== 'apollo-persisted-query-manifest' || object.version !== 1 || !Array.isArray(object.operations)) {
    throw new ConfigError(TRUSTED, `"${file}": expected "format": "apollo-persisted-query-manifest", "version": 1 and an "operations" list`);
  }
  return object.operations.map((operation: unknown, index): [string, unknown] => {
    const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
    if (typeof id !== 'string' || id === '') throw new ConfigError(TRUSTED, `"${file}": operation ${index} has no "id"`);
    return [id, body];
  });
}

function checkEntry(file: string, id: string, body: unknown): asserts body is string {
  if (typeof body !== 'string' || body.trim() === '') throw new ConfigError(TRUSTED, `"${file}": the document of "${id}" is not a GraphQL document string`);
  if (SHA256_ID.test(id) && persistedIdKey(id) !== sha256Hex(body)) {
    throw new ConfigError(TRUSTED, `"${file}": "${id}" is not the SHA-256 digest of its document (the manifest was edited or mixes hash functions)`);
  }
}
