/**
 * Persisted operations over real HTTP (POST and GET) and real graphql-ws: trusted documents from a
 * manifest in either shape (GraphQL Code Generator's client preset, Apollo's persisted query
 * manifest) run by id and nothing else runs; automatic persisted queries register and reuse
 * documents in a bounded memory store, and are off in production.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/config/persisted-documents.js';
import {
  collect,
  createSseClient,
  createWsClient,
  eventually,
  getGraphQL,
  postGraphQL,
  sseErrors,
  wsErrors,
  type ClientErrors,
  type OperationRequest,
} from '../support/graphql.js';
import { countCreates, startPipelineService, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

const STATUS = 'query Status($id: ID!) { test(correlationId: $id) { correlationId status } }';
const START = 'mutation Start { startTest(input: { name: "trusted" }) { correlationId } }';
const FOLLOW = 'subscription Follow($id: ID!) { testMessages(correlationId: $id) { sequence status final } }';
/** Listed, but over the trusted service's alias budget: a manifest does not lift the limits. */
const ALIASED = 'query Aliased { a: test(correlationId: "x") { status } b: test(correlationId: "y") { status } c: test(correlationId: "z") { status } }';
const TYPENAME = '{ __typename }';

const dir = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
/** Client-preset manifest, alias budget 2. */
let trusted: TestService;
/** Apollo manifest, GraphiQL turned on (which startup warns about). */
let apollo: TestService;
const apolloLog: string[] = [];
/** APQ in memory, at most 2 entries and 1024 characters. */
let apq: TestService;
/** Production defaults: APQ off. */
let production: TestService;
/** Tests the trusted service has created. */
const started = countCreates();

const id = (document: string) => sha256Hex(document);
/** As the client preset sends it: its manifest's key. */
const byDocumentId = (document: string): OperationRequest => ({ documentId: `sha256:${id(document)}` });
const byHash = (document: string): OperationRequest => ({ extensions: { persistedQuery: { version: 1, sha256Hash: id(document) } } });
const codes = (errors: ClientErrors | undefined) => (errors ?? []).map((error) => error.extensions?.code);

/** Runs one operation over graphql-ws on a fresh connection: its results, or the errors it ended with. */
async function overWebSocket(url: string, request: OperationRequest, variables?: Record<string, unknown>) {
  const client = createWsClient(url);
  const sub = collect(client, request, variables);
  const errors = await sub.done.then(
    () => undefined,
    (error: unknown) => error as ClientErrors,
  );
  await client.dispose();
  return { results: sub.results, errors };
}

beforeAll(async () => {
  const presetFile = join(dir, 'persisted-documents.json');
  // Keyed "sha256:<hex>", as the client preset writes its manifest.
  writeFileSync(presetFile, JSON.stringify(Object.fromEntries([STATUS, START, FOLLOW, ALIASED].map((document) => [`sha256:${id(document)}`, document]))));
  const apolloFile = join(dir, 'persisted-query-manifest.json');
  writeFileSync(
    apolloFile,
    JSON.stringify({
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [
        { id: id(STATUS), body: STATUS, name: 'Status', type: 'query' },
        { id: id(FOLLOW), body: FOLLOW, name: 'Follow', type: 'subscription' },
      ],
    }),
  );
  trusted = await startPipelineService({ env: { GRAPHQL_TRUSTED_DOCUMENTS: presetFile, GRAPHQL_MAX_ALIASES: '2' }, wrapLog: started.wrapLog });
  [apollo, apq, production] = await Promise.all([
    startPipelineService({
      env: { GRAPHQL_TRUSTED_DOCUMENTS: apolloFile, GRAPHQL_IDE: 'true' },
      logger: pino({ level: 'warn' }, { write: (line: string) => void apolloLog.push(line) }),
    }),
    startPipelineService({ env: { GRAPHQL_APQ: 'memory', GRAPHQL_APQ_MAX_ENTRIES: '2', GRAPHQL_APQ_MAX_BYTES: '1024' } }),
    startPipelineService({ env: { NODE_ENV: 'production' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([apollo, apq, production].map((svc) => svc?.stop()));
  await trusted?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('trusted documents', () => {
  it('runs a listed query by id over HTTP POST, HTTP GET and WebSocket, with documentId or the APQ extension', async () => {
    const created = await trusted.log.create({ correlationId: `trusted-${Date.now()}`, input: null, owner: 'tester' });
    const expected = { test: { correlationId: created.correlationId, status: 'PENDING' } };
    const variables = { id: created.correlationId };
    for (const request of [byDocumentId(STATUS), byHash(STATUS), { ...byDocumentId(STATUS), query: STATUS }]) {
      const post = await postGraphQL(trusted.url, request, variables);
      expect(post.status).toBe(200);
      expect(post.body).toEqual({ data: expected });
      const get = await getGraphQL(trusted.url, { ...request, variables });
      expect(get.status).toBe(200);
      expect(get.body).toEqual({ data: expected });
      const ws = await overWebSocket(trusted.url, request, variables);
      expect(ws.errors).toBeUndefined();
      expect(ws.results).toEqual([{ data: expected }]);
    }
    // The bare digest finds the "sha256:" key (as Apollo's manifest finds the client preset's), and back.
    expect((await postGraphQL(trusted.url, { documentId: id(STATUS) }, variables)).body).toEqual({ data: expected });
    expect((await postGraphQL(apollo.url, { documentId: `sha256:${id(STATUS)}` }, variables)).body).toEqual({ data: { test: null } });
  });

  it('runs a listed mutation by id, and follows the test it started with a subscription by id', async () => {
    const started = await postGraphQL<{ startTest: { correlationId: string } }>(trusted.url, byDocumentId(START));
    expect(started.status).toBe(200);
    const correlationId = started.body.data!.startTest.correlationId;
    const client = createWsClient(trusted.url);
    const sseClient = createSseClient(trusted.url);
    const follow = collect(client, byDocumentId(FOLLOW), { id: correlationId });
    const followSse = collect(sseClient, byHash(FOLLOW), { id: correlationId });
    await Promise.all([follow.waitFor(0), followSse.waitFor(0)]);
    await eventually(() => trusted.log.followers(correlationId) === 2, 10_000, 'both subscribers following');
    await trusted.log.append([
      { correlationId, key: 's:1', messageId: null, sequence: 1, status: 'COMPLETED', final: true, payload: { ok: true }, producedAt: null },
    ]);
    await Promise.all([follow.done, followSse.done]);
    expect(follow.results).toEqual([{ data: { testMessages: { sequence: 1, status: 'COMPLETED', final: true } } }]);
    expect(followSse.results).toEqual(follow.results);
    await client.dispose();
    sseClient.dispose();
  });

  it('refuses an unknown id with PERSISTED_QUERY_NOT_FOUND on both transports (404 over HTTP)', async () => {
    const unknown = byDocumentId('{ notListed }');
    const post = await postGraphQL(trusted.url, unknown);
    expect(post.status).toBe(404);
    expect(codes(post.body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(post.body.data).toBeUndefined();
    expect(codes((await getGraphQL(trusted.url, byHash('{ notListed }'))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(codes(await wsErrors(trusted.url, unknown))).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(codes(await sseErrors(trusted.url, unknown))).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(codes(await sseErrors(trusted.url, byHash('{ notListed }')))).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('refuses any operation text with PERSISTED_QUERY_ONLY on both transports (403 over HTTP), listed or not, introspection included', async () => {
    const before = started.count();
    for (const query of [TYPENAME, STATUS, START, '{ __schema { queryType { name } } }']) {
      const post = await postGraphQL(trusted.url, query, query === STATUS ? { id: 'x' } : undefined);
      expect(post.status).toBe(403);
      expect(codes(post.body.errors)).toEqual(['PERSISTED_QUERY_ONLY']);
      expect(post.body.data).toBeUndefined();
      expect(codes(await wsErrors(trusted.url, query))).toEqual(['PERSISTED_QUERY_ONLY']);
      expect(codes(await sseErrors(trusted.url, query))).toEqual(['PERSISTED_QUERY_ONLY']);
    }
    expect(codes((await getGraphQL(trusted.url, { query: TYPENAME })).body.errors)).toEqual(['PERSISTED_QUERY_ONLY']);
    // The mutation's text did not run.
    expect(started.count()).toBe(before);
  });

  it("refuses an id sent with another document's text with PERSISTED_QUERY_MISMATCH on both transports", async () => {
    const swapped = { ...byDocumentId(STATUS), query: TYPENAME };
    const post = await postGraphQL(trusted.url, swapped, { id: 'x' });
    expect(post.status).toBe(400);
    expect(codes(post.body.errors)).toEqual(['PERSISTED_QUERY_MISMATCH']);
    expect(codes(await wsErrors(trusted.url, swapped, { id: 'x' }))).toEqual(['PERSISTED_QUERY_MISMATCH']);
  });

  it('still applies every limit and scope to a listed document', async () => {
    const post = await postGraphQL(trusted.url, byDocumentId(ALIASED));
    expect(post.status).toBe(400);
    expect(codes(post.body.errors)).toEqual(['QUERY_TOO_MANY_ALIASES']);
    expect(codes(await wsErrors(trusted.url, byDocumentId(ALIASED)))).toEqual(['QUERY_TOO_MANY_ALIASES']);
    const readOnly = await mintToken({ scope: 'tests:read' });
    const mutation = await postGraphQL(trusted.url, byDocumentId(START), undefined, { token: readOnly });
    expect(mutation.status).toBe(403);
    expect(codes(mutation.body.errors)).toEqual(['FORBIDDEN']);
    // A mutation by id over GET is still refused: GET runs queries only.
    expect((await getGraphQL(trusted.url, byDocumentId(START))).status).toBe(405);
  });

  it("reads Apollo's persisted query manifest: its ids run on both transports, nothing else does", async () => {
    const created = await apollo.log.create({ correlationId: `apollo-${Date.now()}`, input: null, owner: 'tester' });
    const variables = { id: created.correlationId };
    const expected = { data: { test: { correlationId: created.correlationId, status: 'PENDING' } } };
    expect((await postGraphQL(apollo.url, byHash(STATUS), variables)).body).toEqual(expected);
    expect((await overWebSocket(apollo.url, byHash(STATUS), variables)).results).toEqual([expected]);
    expect(codes((await postGraphQL(apollo.url, byHash(START))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(codes(await wsErrors(apollo.url, TYPENAME))).toEqual(['PERSISTED_QUERY_ONLY']);
  });

  it('warns at startup when GraphiQL is on with trusted documents, as it can run none of its operations', () => {
    const warnings = apolloLog.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40);
    expect(warnings.map((line) => line.msg)).toContain(
      'GRAPHQL_IDE is on with GRAPHQL_TRUSTED_DOCUMENTS: GraphiQL sends operation text, which is refused (its schema introspection too)',
    );
  });
});

describe('automatic persisted queries', () => {
  const document = (n: number) => `query Apq${n} { __typename }`;
  const apqRequest = (text: string, withQuery: boolean): OperationRequest => ({ ...byHash(text), ...(withQuery ? { query: text } : {}) });

  it('registers a document sent with its hash and runs it by hash afterwards, on both transports', async () => {
    const text = document(1);
    expect(codes((await postGraphQL(apq.url, apqRequest(text, false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(codes(await wsErrors(apq.url, apqRequest(text, false)))).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect((await postGraphQL(apq.url, apqRequest(text, true))).body).toEqual({ data: { __typename: 'Query' } });
    expect((await getGraphQL(apq.url, apqRequest(text, false))).body).toEqual({ data: { __typename: 'Query' } });
    expect((await overWebSocket(apq.url, apqRequest(text, false))).results).toEqual([{ data: { __typename: 'Query' } }]);
    // Registered over WebSocket, run over HTTP: one store.
    const other = document(2);
    expect((await overWebSocket(apq.url, apqRequest(other, true))).results).toEqual([{ data: { __typename: 'Query' } }]);
    expect((await postGraphQL(apq.url, apqRequest(other, false))).status).toBe(200);
  });

  it("refuses a hash that is not the document's with PERSISTED_QUERY_MISMATCH, registering nothing", async () => {
    const forged = { extensions: { persistedQuery: { version: 1, sha256Hash: id(document(3)) } }, query: '{ __schema { queryType { name } } }' };
    const post = await postGraphQL(apq.url, forged);
    expect(post.status).toBe(400);
    expect(codes(post.body.errors)).toEqual(['PERSISTED_QUERY_MISMATCH']);
    expect(codes(await wsErrors(apq.url, forged))).toEqual(['PERSISTED_QUERY_MISMATCH']);
    expect(codes((await postGraphQL(apq.url, apqRequest(document(3), false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('keeps at most GRAPHQL_APQ_MAX_ENTRIES documents, dropping the least recently used', async () => {
    const [a, b, c] = [document(10), document(11), document(12)];
    for (const text of [a, b]) expect((await postGraphQL(apq.url, apqRequest(text, true))).status).toBe(200);
    // Using `a` makes `b` the least recently used; registering `c` drops it.
    expect((await postGraphQL(apq.url, apqRequest(a, false))).status).toBe(200);
    expect((await postGraphQL(apq.url, apqRequest(c, true))).status).toBe(200);
    expect(codes((await postGraphQL(apq.url, apqRequest(b, false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    for (const text of [a, c]) expect((await postGraphQL(apq.url, apqRequest(text, false))).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('keeps at most GRAPHQL_APQ_MAX_BYTES of document text: larger documents run but are not kept', async () => {
    const sized = (n: number, length: number) => `{ test(correlationId: "${String(n).padEnd(length, 'x')}") { status } }`;
    const [first, second, huge] = [sized(30, 600), sized(31, 600), sized(32, 1100)];
    for (const text of [first, second, huge]) expect((await postGraphQL(apq.url, apqRequest(text, true))).body).toEqual({ data: { test: null } });
    // Two entries fit the count, not the 1024 characters: the second pushed the first out.
    expect(codes((await postGraphQL(apq.url, apqRequest(first, false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect((await postGraphQL(apq.url, apqRequest(second, false))).body).toEqual({ data: { test: null } });
    expect(codes((await postGraphQL(apq.url, apqRequest(huge, false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('is off in production: a hash alone answers PERSISTED_QUERY_NOT_SUPPORTED, the text with it runs', async () => {
    const text = document(20);
    const post = await postGraphQL(production.url, apqRequest(text, false));
    expect(post.status).toBe(400);
    expect(codes(post.body.errors)).toEqual(['PERSISTED_QUERY_NOT_SUPPORTED']);
    expect(codes(await wsErrors(production.url, apqRequest(text, false)))).toEqual(['PERSISTED_QUERY_NOT_SUPPORTED']);
    expect((await postGraphQL(production.url, apqRequest(text, true))).body).toEqual({ data: { __typename: 'Query' } });
    expect(codes((await postGraphQL(production.url, apqRequest(text, false))).body.errors)).toEqual(['PERSISTED_QUERY_NOT_SUPPORTED']);
  });
});
