/**
 * The persisted-operations settings: defaults, both manifest shapes, and every way a manifest or a
 * setting is refused at startup, in loadConfig and as the process's exit code 78.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { ConfigError } from '../../../src/base/errors.js';
import { sha256Hex } from '../../../src/config/persisted-documents.js';
import { createOperationResolver } from '../../../src/graphql/pipeline/plugins/persisted-operations.js';
import { configError } from '../../support/config-error.js';
import { runUntilExit } from '../../support/process.js';
import { HS256_ENV } from '../../support/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'manifest-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QUERY = 'query Ping { __typename }';
let files = 0;
/** Writes `content` (JSON unless a string) to a new file in the temporary folder. */
function manifest(content: unknown): string {
  const file = join(dir, `manifest-${(files += 1)}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('persisted operations configuration', () => {
  it('defaults: no trusted documents, APQ in memory (1000 entries) outside production and off in production', () => {
    expect(loadConfig({}).persistedOperations).toEqual({ trustedDocuments: null, apq: { mode: 'memory', maxEntries: 1000, maxBytes: 16 * 1024 * 1024 } });
    expect(loadConfig({ NODE_ENV: 'production', ...HS256_ENV }).persistedOperations.apq.mode).toBe('off');
    expect(
      loadConfig({ NODE_ENV: 'production', ...HS256_ENV, GRAPHQL_APQ: 'memory', GRAPHQL_APQ_MAX_ENTRIES: '50', GRAPHQL_APQ_MAX_BYTES: '65536' })
        .persistedOperations.apq,
    ).toEqual({ mode: 'memory', maxEntries: 50, maxBytes: 65_536 });
    expect(loadConfig({ GRAPHQL_APQ: 'off' }).persistedOperations.apq.mode).toBe('off');
  });

  it('reads a client-preset manifest, keeping opaque (non-SHA-256) ids, with APQ and the IDE off by default', () => {
    const file = manifest({ [sha256Hex(QUERY)]: QUERY, 'sha1-or-custom-id': '{ __typename }' });
    const config = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: file });
    expect(config.persistedOperations.trustedDocuments?.file).toBe(file);
    expect([...(config.persistedOperations.trustedDocuments?.documents ?? [])]).toEqual([
      [sha256Hex(QUERY), QUERY],
      ['sha1-or-custom-id', '{ __typename }'],
    ]);
    expect(config.persistedOperations.apq.mode).toBe('off');
    // GraphiQL could run none of its own operations; on only when asked for (startup then warns).
    expect(config.browser.graphqlIde).toBe(false);
    expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: file, GRAPHQL_IDE: 'true' }).browser.graphqlIde).toBe(true);
  });

  it("reads Apollo's persisted query manifest", () => {
    const file = manifest({
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [
        { id: sha256Hex(QUERY), body: QUERY, name: 'Ping', type: 'query' },
        { id: 'custom', body: '{ __typename }', name: null, type: 'query' },
      ],
    });
    expect([...(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: file }).persistedOperations.trustedDocuments?.documents ?? [])]).toEqual([
      [sha256Hex(QUERY), QUERY],
      ['custom', '{ __typename }'],
    ]);
  });

  it('keys SHA-256 ids by their lower-case digest however they are spelled ("sha256:" as the client preset writes them)', () => {
    const file = manifest({ [`sha256:${sha256Hex(QUERY).toUpperCase()}`]: QUERY });
    expect([...(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: file }).persistedOperations.trustedDocuments?.documents.keys() ?? [])]).toEqual([sha256Hex(QUERY)]);
  });

  it.each([
    [
      'an unreadable file',
      { GRAPHQL_TRUSTED_DOCUMENTS: '/nonexistent/manifest.json' },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /cannot read "\/nonexistent\/manifest.json" \(ENOENT\)/,
    ],
    ['a file that is not JSON', { GRAPHQL_TRUSTED_DOCUMENTS: manifest('{ nope') }, 'GRAPHQL_TRUSTED_DOCUMENTS', /is not JSON/],
    [
      'a JSON list',
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest([QUERY]) },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /neither a \{ "<id>": "<document>" \} map nor an Apollo persisted query manifest/,
    ],
    ['an empty manifest', { GRAPHQL_TRUSTED_DOCUMENTS: manifest({}) }, 'GRAPHQL_TRUSTED_DOCUMENTS', /lists no documents/],
    [
      'another manifest format',
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest({ format: 'relay', version: 1, operations: [] }) },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /expected "format": "apollo-persisted-query-manifest"/,
    ],
    [
      'an Apollo operation without an id',
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ body: QUERY }] }) },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /operation 0 has no "id"/,
    ],
    [
      'a document that is not a string',
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest({ abc: 42 }) },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /the document of "abc" is not a GraphQL document string/,
    ],
    [
      "a SHA-256 id that is not its document's digest",
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256Hex('{ other }')]: QUERY }) },
      'GRAPHQL_TRUSTED_DOCUMENTS',
      /is not the SHA-256 digest of its document/,
    ],
    [
      'APQ in memory with trusted documents',
      { GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256Hex(QUERY)]: QUERY }), GRAPHQL_APQ: 'memory' },
      'GRAPHQL_APQ',
      /must be off with GRAPHQL_TRUSTED_DOCUMENTS/,
    ],
    ['an unknown APQ store', { GRAPHQL_APQ: 'redis' }, 'GRAPHQL_APQ', /expected one of off, memory, got "redis"/],
    ['an empty APQ store', { GRAPHQL_APQ_MAX_ENTRIES: '0' }, 'GRAPHQL_APQ_MAX_ENTRIES', /must be at least 1/],
    ['a tiny APQ byte budget', { GRAPHQL_APQ_MAX_BYTES: '10' }, 'GRAPHQL_APQ_MAX_BYTES', /must be at least 1024/],
  ])('refuses %s, naming the variable', (_what, env, variable, message) => {
    const error = configError(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^${variable}: `));
    expect(error.message).toMatch(message);
  });

  it('refuses a manifest with a document that does not parse as the pipeline is built, naming the variable', () => {
    const config = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ abc: 'query { test( ' }) }).persistedOperations;
    const error = (() => {
      try {
        createOperationResolver(config);
      } catch (thrown) {
        return thrown as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.variable).toBe('GRAPHQL_TRUSTED_DOCUMENTS');
    expect(error.message).toMatch(/^GRAPHQL_TRUSTED_DOCUMENTS: ".*": the document of "abc" does not parse \(Syntax Error/);
  });

  it('stops the process with exit code 78 naming GRAPHQL_TRUSTED_DOCUMENTS when a document does not parse', { timeout: 30_000 }, async () => {
    const file = manifest({ abc: '{ broken' });
    const { code, output } = await runUntilExit({ ...HS256_ENV, PORT: '0', GRAPHQL_TRUSTED_DOCUMENTS: file });
    expect(code).toBe(78);
    // Checked as the pipeline is built, after the start's own log lines: the fatal one is last.
    const line = JSON.parse(output.trim().split('\n').at(-1)!) as { level: string; msg: string; variable: string };
    expect(line).toMatchObject({ level: 'fatal', variable: 'GRAPHQL_TRUSTED_DOCUMENTS' });
    expect(line.msg).toMatch(/^invalid configuration: GRAPHQL_TRUSTED_DOCUMENTS: ".*": the document of "abc" does not parse/);
  });
});
