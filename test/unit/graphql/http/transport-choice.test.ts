/**
 * The transport a request to `/graphql` is answered by, over real HTTP: a subscription the
 * lifecycle takes is read by its parse phase, and the operation prepared next gets the same
 * document (one parse per text); a text it refuses (trusted documents only) is read alone and never
 * kept for other callers; a document that never names `subscription` is not parsed.
 */
import express from 'express';
import { buildSchema, type DocumentNode, type GraphQLError } from 'graphql';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistedIdKey } from '../../../../src/config/persisted-documents.js';
import { streamingTransport } from '../../../../src/graphql/http/transport-choice.js';
import { createOperationLifecycle } from '../../../../src/graphql/pipeline/operation-lifecycle.js';
import { documentCachingPlugin } from '../../../../src/graphql/pipeline/plugins/document-caching.js';
import { persistedOperationsPlugin } from '../../../../src/graphql/pipeline/plugins/persisted-operations.js';
import { testPrincipal } from '../../../support/principal.js';

const schema = buildSchema('type Query { a: Int } type Subscription { a: Int }');
const TRUSTED_ID = 'sub-a';
const TRUSTED_TEXT = 'subscription Trusted { a }';

/** A lifecycle with the service's document plugins, trusted documents or not; `parsed` lists what its parse phase answered. */
function lifecycleWith(trusted: boolean) {
  const caching = documentCachingPlugin();
  const parsed: Array<DocumentNode | GraphQLError> = [];
  const persisted = persistedOperationsPlugin({
    trustedDocuments: trusted ? { file: 'manifest.json', documents: new Map([[persistedIdKey(TRUSTED_ID), TRUSTED_TEXT]]) } : null,
    apq: { mode: 'off', maxEntries: 0, maxBytes: 0 },
  });
  const lifecycle = createOperationLifecycle({
    schema,
    plugins: [persisted, caching, { name: 'seen', onParse: () => ({ done: (result) => void parsed.push(result) }) }],
    createContext: () => ({}),
    observerFailed: (plugin, hook, error) => {
      throw new Error(`${plugin} ${hook}: ${String(error)}`);
    },
  });
  return { lifecycle, caching, parsed };
}

const open = lifecycleWith(false);
const trusted = lifecycleWith(true);
let server: ReturnType<express.Express['listen']>;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(express.json());
  app.post('/open', (req, res) => void res.json({ transport: streamingTransport(req, open.lifecycle) ?? 'one response' }));
  app.post('/trusted', (req, res) => void res.json({ transport: streamingTransport(req, trusted.lifecycle) ?? 'one response' }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function choice(path: string, accept: string, body: Record<string, unknown>): Promise<string> {
  open.parsed.length = 0;
  trusted.parsed.length = 0;
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
  return ((await response.json()) as { transport: string }).transport;
}

const JSON_THEN_EVENTS = 'application/graphql-response+json, application/json;q=0.9, text/event-stream;q=0.8';
const MULTIPART = 'multipart/mixed;subscriptionSpec="1.0", application/json';

describe('the transport choice', () => {
  it("reads a subscription through the lifecycle's parse phase: the operation prepared next gets that document", async () => {
    const query = 'subscription { a }';
    expect(await choice('/open', JSON_THEN_EVENTS, { query })).toBe('sse');
    expect(open.parsed).toHaveLength(1);
    const prepared = await open.lifecycle.prepare({ principal: testPrincipal(), transport: 'sse', params: { query } });
    if (Array.isArray(prepared)) throw new Error('expected a prepared operation');
    expect(prepared.document).toBe(open.parsed[0]);
    expect(await choice('/open', MULTIPART, { query: 'subscription S { a }' })).toBe('multipart');
    expect(open.caching.onParse?.('subscription S { a }')?.kept).toBe(open.parsed[0]);
  });

  it('parses no document that does not name a subscription, and leaves one that does not parse to one response', async () => {
    expect(await choice('/open', JSON_THEN_EVENTS, { query: '{ a }' })).toBe('one response');
    expect(open.parsed).toEqual([]);
    expect(await choice('/open', JSON_THEN_EVENTS, { query: 'subscription { a' })).toBe('one response');
    expect(open.parsed).toMatchObject([{ extensions: { code: 'GRAPHQL_PARSE_FAILED' } }]);
  });

  it('chooses by a text the lifecycle refuses without keeping it, and keeps a trusted document named by its id', async () => {
    const sent = 'subscription Sent { a }';
    // The event stream refuses it in its own protocol (PERSISTED_QUERY_ONLY); no caller's cache holds it.
    expect(await choice('/trusted', JSON_THEN_EVENTS, { query: sent })).toBe('sse');
    expect(trusted.parsed).toEqual([]);
    expect(trusted.caching.onParse?.(sent)?.kept).toBeUndefined();
    expect(await choice('/trusted', JSON_THEN_EVENTS, { documentId: TRUSTED_ID })).toBe('sse');
    expect(trusted.parsed).toHaveLength(1);
    expect(trusted.caching.onParse?.(TRUSTED_TEXT)?.kept).toBe(trusted.parsed[0]);
    expect(await choice('/trusted', JSON_THEN_EVENTS, { documentId: 'unknown' })).toBe('one response');
  });
});
