/**
 * The service as an Apollo Federation 2 subgraph (`FEDERATION=on`), over real HTTP on 127.0.0.1:
 * its own surface (`_entities` batched through the DataLoader, counted in the cost limit and capped;
 * `_service` behind the introspection switch; both refused with trusted documents), and a supergraph
 * composed in-process with `@apollo/composition` from this service's `_service { sdl }` and a
 * second subgraph written here (`Build { id, tests }`), served by `@apollo/gateway` (a query
 * joining both subgraphs, the caller's bearer token forwarded, depth and cost refusals passed
 * through) and by Hive Gateway's runtime (the same join and token, and `testMessages` forwarded
 * from this service's graphql-ws to an SSE client and to a graphql-ws client: replay, then live,
 * then complete; `testChanges` to a graphql-ws client). The results subgraph runs without a broker
 * (the pipeline's harness): its results are appended to its log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime, getGraphQLWSOptions, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { parse } from 'graphql';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { sha256Hex } from '../../src/config/persisted-documents.js';
import type { IncomingMessage } from '../../src/domain/types.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { incoming } from '../log/storage-contract.js';
import { subscribeChanges } from '../support/changes.js';
import { collect, createSseClient, createWsClient, eventually, postGraphQL, type ClientErrors } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { mintToken } from '../support/tokens.js';

/** Results subgraph budgets, low enough for a gateway's plan to reach them. */
const MAX_DEPTH = 3;
const MAX_COST = 500;

/** The second subgraph: builds, each naming tests of the results subgraph by correlation id. */
const BUILDS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Build @key(fields: "id") {
    id: ID!
    "Nullable items: a test the caller may not see resolves to null."
    tests: [Test]!
  }
  type Test @key(fields: "correlationId", resolvable: false) {
    correlationId: ID!
  }
  type Query {
    build(id: ID!): Build
  }
`;

const ENTITIES = 'query Entities($representations: [_Any!]!) { _entities(representations: $representations) { ... on Test { correlationId status } } }';
const ENTITY_PAGES =
  'query EntityPages($representations: [_Any!]!) { _entities(representations: $representations) { ... on Test { messages(first: 10) { totalCount } } } }';
const SERVICE_SDL = '{ _service { sdl } }';

/** The batches the results subgraph's log was asked for. */
const getManyCalls: Array<readonly string[]> = [];
/** Messages the results subgraph's log handed out (whole records hold them all, summaries none). */
let messagesRead = 0;
function counting(log: ResultLog): ResultLog {
  return {
    ...log,
    getMany: async (ids) => {
      getManyCalls.push(ids);
      const tests = await log.getMany(ids);
      for (const test of tests) if (test !== null && 'messages' in test) messagesRead += (test.messages as unknown[]).length;
      return tests;
    },
    messages: async (id, range) => {
      const page = await log.messages(id, range);
      messagesRead += page?.messages.length ?? 0;
      return page;
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'federation-'));
let results: TestService;
/** FEDERATION=on, GRAPHQL_INTROSPECTION=false. */
let noIntrospection: TestService;
/** FEDERATION=on with a manifest that lists an `_entities` document. */
let trusted: TestService;
let builds: ApolloServer;
let buildsUrl: string;
let gateway: ApolloServer;
let gatewayUrl: string;
/** Hive Gateway's runtime over the same supergraph: SSE and graphql-ws to clients, graphql-ws to this service. */
let hive: GatewayRuntime;
let hiveServer: Server;
/** The gateway's graphql-ws endpoint for its clients, on `/graphql` of the same server. */
let hiveWs: WebSocketServer;
let hiveWsServer: { dispose: () => unknown };
let hiveUrl: string;
/** Build id to the correlation ids it names; filled by the tests. */
const buildTests = new Map<string, string[]>();

const representations = (ids: readonly string[]) => ids.map((correlationId) => ({ __typename: 'Test', correlationId }));
const codes = (errors: ClientErrors | undefined) => (errors ?? []).map((error) => error.extensions?.code);
/**
 * A subgraph's refusal as @apollo/gateway reports it: a non-2xx answer becomes an error whose
 * `extensions.response` holds the subgraph's status and its own errors, codes included (401 and
 * 403 also set the gateway error's code to UNAUTHENTICATED and FORBIDDEN).
 */
const refusals = (errors: ClientErrors | undefined) =>
  (errors ?? []).map((error) => {
    const response = error.extensions?.response as { status: number; body: { errors?: ClientErrors } } | undefined;
    return { status: response?.status, codes: codes(response?.body.errors) };
  });

/** Creates tests in the results subgraph's log directly, owned by `owner`. */
async function createTests(prefix: string, count: number, owner = 'tester'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await results.log.create({ correlationId: `${prefix}-${i}-${Date.now()}`, input: { i }, owner })).correlationId);
  return ids;
}

beforeAll(async () => {
  results = await startPipelineService({
    env: { FEDERATION: 'on', GRAPHQL_MAX_DEPTH: String(MAX_DEPTH), GRAPHQL_MAX_COST: String(MAX_COST) },
    wrapLog: counting,
  });
  noIntrospection = await startPipelineService({ env: { FEDERATION: 'on', GRAPHQL_INTROSPECTION: 'false' } });
  const manifest = join(dir, 'persisted-documents.json');
  writeFileSync(manifest, JSON.stringify({ [`sha256:${sha256Hex(ENTITIES)}`]: ENTITIES }));
  trusted = await startPipelineService({ env: { FEDERATION: 'on', GRAPHQL_TRUSTED_DOCUMENTS: manifest } });

  builds = new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(BUILDS_SDL),
        resolvers: {
          Query: { build: (_root: unknown, { id }: { id: string }) => (buildTests.has(id) ? { id } : null) },
          Build: { tests: ({ id }: { id: string }) => (buildTests.get(id) ?? []).map((correlationId) => ({ correlationId })) },
        } as never,
      },
    ]),
    // Traces go to Apollo's hosted service, which an offline test has none of.
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  buildsUrl = (await startStandaloneServer(builds, { listen: { host: '127.0.0.1', port: 0 } })).url;

  // The results subgraph's SDL as a gateway's tooling reads it: `_service { sdl }`.
  const sdl = await postGraphQL<{ _service: { sdl: string } }>(results.url, SERVICE_SDL);
  expect(sdl.body.errors).toBeUndefined();
  const composed = composeServices([
    { name: 'results', typeDefs: parse(sdl.body.data!._service.sdl), url: `${results.url}/graphql` },
    { name: 'builds', typeDefs: parse(BUILDS_SDL), url: buildsUrl },
  ]);
  if (composed.errors !== undefined) throw new Error(`composition failed: ${composed.errors.map((error) => error.message).join('; ')}`);

  gateway = new ApolloServer({
    gateway: new ApolloGateway({
      supergraphSdl: composed.supergraphSdl,
      // The caller's bearer token goes to every subgraph: the results subgraph authorizes each query plan step.
      buildService: ({ url }) =>
        new RemoteGraphQLDataSource<{ authorization?: string }>({
          url,
          willSendRequest({ request, context }) {
            if (context.authorization !== undefined) request.http?.headers.set('authorization', context.authorization);
          },
        }),
    }),
  });
  gatewayUrl = (
    await startStandaloneServer(gateway, {
      listen: { host: '127.0.0.1', port: 0 },
      context: async ({ req }) => (req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }),
    })
  ).url;

  hive = createGatewayRuntime({
    supergraph: composed.supergraphSdl,
    logging: false,
    // Queries and the token go over HTTP; subscriptions over graphql-ws on the same path, the token
    // in `connection_init` as this service reads it there.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => {
        const authorization = request.headers.get('authorization');
        return authorization === null ? {} : { authorization };
      },
    },
    transportEntries: {
      results: {
        options: {
          subscriptions: { kind: 'ws', location: '/graphql', options: { connectionParams: { authorization: '{context.headers.authorization}' } } },
        },
      },
    },
  });
  hiveServer = createServer((request, response) => void hive(request, response));
  // graphql-ws for the gateway's own clients: a client's `connection_init` payload is merged into
  // the headers the gateway propagates, so its `authorization` reaches this service as over HTTP.
  hiveWs = new WebSocketServer({ server: hiveServer, path: '/graphql' });
  hiveWsServer = useServer(
    getGraphQLWSOptions(hive, ({ extra }) => ({ req: (extra as Extra).request, socket: (extra as Extra).socket })),
    hiveWs,
  );
  await new Promise<void>((resolve) => hiveServer.listen(0, '127.0.0.1', resolve));
  hiveUrl = `http://127.0.0.1:${(hiveServer.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await hiveWsServer?.dispose();
  await new Promise((resolve) => (hiveWs === undefined ? resolve(undefined) : hiveWs.close(resolve)));
  hiveServer?.closeAllConnections();
  await new Promise((resolve) => hiveServer?.close(resolve));
  await hive?.dispose();
  await gateway?.stop();
  await builds?.stop();
  await trusted?.stop();
  await noIntrospection?.stop();
  await results?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** POSTs to the gateway (its URL ends with a slash), with `token` as the bearer when given. */
async function viaGateway<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, token?: string) {
  const response = await fetch(gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: T | null; errors?: ClientErrors } };
}

describe('the subgraph surface', () => {
  it('adds Test @key(fields: "correlationId") to the SDL of schema/', async () => {
    const { body } = await postGraphQL<{ _service: { sdl: string } }>(results.url, SERVICE_SDL);
    expect(body.data?._service.sdl).toMatch(/type Test\s+@key\(fields: "correlationId"\)/);
    expect(body.data?._service.sdl).toContain('testMessages(');
  });

  it("resolves a batch of representations with one DataLoader batch, in order, with test()'s ownership", async () => {
    const mine = await createTests('entities', 3);
    const [theirs] = await createTests('entities-other', 1, 'someone-else');
    getManyCalls.length = 0;
    const { body } = await postGraphQL(results.url, ENTITIES, { representations: representations([mine[0]!, theirs!, mine[1]!, mine[2]!]) });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([
      { correlationId: mine[0], status: 'PENDING' },
      null,
      { correlationId: mine[1], status: 'PENDING' },
      { correlationId: mine[2], status: 'PENDING' },
    ]);
    expect(getManyCalls).toEqual([[mine[0], theirs, mine[1], mine[2]]]);
    // The admin scope sees every test, as for test(correlationId:).
    const admin = await mintToken({ sub: 'admin', scope: 'tests:read tests:admin' });
    const seen = await postGraphQL(results.url, ENTITIES, { representations: representations([theirs!]) }, { token: admin });
    expect(seen.body.data?._entities).toEqual([{ correlationId: theirs, status: 'PENDING' }]);
  });

  it('reads no message of a representation the caller may not see, and one page of one it may', async () => {
    const [theirs] = await createTests('entities-hidden', 1, 'someone-else');
    const [mine] = await createTests('entities-paged', 1);
    await results.log.append([theirs!, mine!].flatMap((id) => Array.from({ length: 30 }, (_, i) => incoming(id, { sequence: i + 1 }))));
    messagesRead = 0;
    const { body } = await postGraphQL(results.url, ENTITY_PAGES, { representations: representations([theirs!, mine!]) });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([null, { messages: { totalCount: 30 } }]);
    expect(messagesRead).toBe(10);
  });

  it('refuses _entities without the read scope, as test() does', async () => {
    const [id] = await createTests('entities-scope', 1);
    const token = await mintToken({ scope: 'tests:write' });
    const { status, body } = await postGraphQL(results.url, ENTITIES, { representations: representations([id!]) }, { token });
    expect(status).toBe(403);
    expect(codes(body.errors)).toEqual(['FORBIDDEN']);
  });

  it('counts representations in the cost limit and caps them at 100, as tests(correlationIds:)', async () => {
    // 1 + 20 × (1 + 10 × 1) = 221 is within 500; 1 + 60 × 11 = 661 is not.
    const twenty = Array.from({ length: 20 }, (_, i) => `cost-${i}`);
    const within = await postGraphQL(results.url, ENTITY_PAGES, { representations: representations(twenty) });
    expect(within.body.errors).toBeUndefined();
    const sixty = Array.from({ length: 60 }, (_, i) => `cost-${i}`);
    const over = await postGraphQL(results.url, ENTITY_PAGES, { representations: representations(sixty) });
    expect(over.status).toBe(400);
    expect(over.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost: 661, maxCost: MAX_COST });

    const many = Array.from({ length: 101 }, (_, i) => `cap-${i}`);
    const capped = await postGraphQL(results.url, ENTITIES, { representations: representations(many) });
    expect(codes(capped.body.errors)).toEqual(['BAD_USER_INPUT']);
    expect(capped.body.errors?.[0]?.message).toBe('At most 100 representations per query, got 101.');
  });

  it('refuses _service when introspection is off, as it refuses __schema', async () => {
    const { status, body } = await postGraphQL(noIntrospection.url, SERVICE_SDL);
    expect(status).toBe(400);
    expect(codes(body.errors)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(body.errors?.[0]?.message).toContain('"_service" reveals the schema');
    // Inside a fragment too.
    const fragment = await postGraphQL(noIntrospection.url, '{ ...F } fragment F on Query { _service { sdl } }');
    expect(codes(fragment.body.errors)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    // Entities stay available to a gateway.
    const entities = await postGraphQL(noIntrospection.url, ENTITIES, { representations: [] });
    expect(entities.body).toEqual({ data: { _entities: [] } });
  });

  it("with trusted documents, refuses a gateway's operations: as text, and even when the manifest lists one", async () => {
    const asText = await postGraphQL(trusted.url, ENTITIES, { representations: [] });
    expect(codes(asText.body.errors)).toEqual(['PERSISTED_QUERY_ONLY']);
    const listed = await postGraphQL(trusted.url, { documentId: `sha256:${sha256Hex(ENTITIES)}` }, { representations: [] });
    expect(listed.status).toBe(400);
    expect(codes(listed.body.errors)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(listed.body.errors?.[0]?.message).toContain('GRAPHQL_TRUSTED_DOCUMENTS');
  });
});

describe('through @apollo/gateway', () => {
  it('joins a build from the builds subgraph with its tests from this one, in one DataLoader batch', async () => {
    const ids = await createTests('joined', 2);
    buildTests.set('build-1', ids);
    getManyCalls.length = 0;
    const token = await mintToken();
    const { status, body } = await viaGateway('{ build(id: "build-1") { id tests { correlationId status messageCount } } }', undefined, token);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      build: { id: 'build-1', tests: ids.map((correlationId) => ({ correlationId, status: 'PENDING', messageCount: 0 })) },
    });
    expect(getManyCalls).toEqual([ids]);
  });

  it('forwards the bearer token: another subject sees null, no token or a wrong one is refused', async () => {
    const ids = await createTests('token', 1);
    buildTests.set('build-2', ids);
    // `status` is the results subgraph's: the key alone would be answered by the builds subgraph.
    const query = '{ build(id: "build-2") { id tests { correlationId status } } }';

    const other = await viaGateway(query, undefined, await mintToken({ sub: 'someone-else' }));
    expect(other.body.errors).toBeUndefined();
    expect(other.body.data).toEqual({ build: { id: 'build-2', tests: [null] } });

    for (const token of [undefined, await mintToken({}, { secret: 'another-secret-of-at-least-thirty-two-bytes' })]) {
      const { body } = await viaGateway(query, undefined, token);
      // The builds subgraph answers; the results subgraph refuses the plan's _entities step.
      expect(body.data).toEqual({ build: { id: 'build-2', tests: [null] } });
      expect(codes(body.errors)).toEqual(['UNAUTHENTICATED']);
      expect(refusals(body.errors)).toEqual([{ status: 401, codes: ['UNAUTHENTICATED'] }]);
    }
  });

  it("passes the results subgraph's depth and cost refusals through", async () => {
    const ids = await createTests('limits', 2);
    buildTests.set('build-3', ids);
    const token = await mintToken();

    // In the results subgraph's operation: _entities (0) > messages > edges > node > payload (4), over 3.
    const deep = await viaGateway('{ build(id: "build-3") { tests { messages(first: 1) { edges { node { payload } } } } } }', undefined, token);
    expect(refusals(deep.body.errors)).toEqual([{ status: 400, codes: ['QUERY_TOO_DEEP'] }]);
    expect(deep.body.data).toEqual({ build: { tests: [null, null] } });

    // 1 + 2 × (1 + 1000 × 1) = 2003 > 500.
    const costly = await viaGateway('{ build(id: "build-3") { tests { messages(first: 1000) { totalCount } } } }', undefined, token);
    expect(refusals(costly.body.errors)).toEqual([{ status: 400, codes: ['QUERY_TOO_COMPLEX'] }]);
    expect(costly.body.errors?.[0]?.extensions?.response).toMatchObject({ body: { errors: [{ extensions: { cost: 2003, maxCost: MAX_COST } }] } });
  });
});

const FOLLOW = 'subscription Follow($id: ID!) { testMessages(correlationId: $id) { sequence payload final } }';
const append = (id: string, fields: Partial<IncomingMessage>) => results.log.append([incoming(id, fields)]);

describe('through Hive Gateway', () => {
  it('joins both subgraphs over HTTP', async () => {
    const ids = await createTests('hive', 2);
    buildTests.set('build-4', ids);
    const { body } = await postGraphQL(hiveUrl, '{ build(id: "build-4") { id tests { correlationId status } } }', undefined, { token: await mintToken() });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ build: { id: 'build-4', tests: ids.map((correlationId) => ({ correlationId, status: 'PENDING' })) } });
  });

  it('forwards testMessages over SSE from graphql-ws: replay, then live, nothing lost or repeated, then complete', async () => {
    const [id] = await createTests('hive-follow', 1);
    await append(id!, { sequence: 1, payload: 'stored' });
    const client = createSseClient(hiveUrl, { token: await mintToken() });
    const sub = collect<{ testMessages: { sequence: number; payload: unknown; final: boolean } }>(client, FOLLOW, { id });
    await sub.waitFor(1);
    await append(id!, { sequence: 2, payload: 'live' });
    await append(id!, { sequence: 3, payload: 'final', final: true });
    await sub.done;
    client.dispose();
    expect(sub.results.map((result) => result.errors ?? result.data?.testMessages.payload)).toEqual(['stored', 'live', 'final']);
    await eventually(() => results.log.followers(id!) === 0, 5000, 'the follower to end');
  });

  it('forwards testMessages to a graphql-ws client from graphql-ws: replay, then live, nothing lost or repeated, then complete', async () => {
    const [id] = await createTests('hive-follow-ws', 1);
    await append(id!, { sequence: 1, payload: 'stored' });
    const token = await mintToken();
    const client = createWsClient(hiveUrl, { connectionParams: { authorization: `Bearer ${token}` } });
    const sub = collect<{ testMessages: { sequence: number; payload: unknown; final: boolean } }>(client, FOLLOW, { id });
    await sub.waitFor(1);
    await append(id!, { sequence: 2, payload: 'live' });
    await append(id!, { sequence: 3, payload: 'final', final: true });
    await sub.done;
    await client.dispose();
    expect(sub.results.map((result) => result.errors ?? result.data?.testMessages)).toEqual([
      { sequence: 1, payload: 'stored', final: false },
      { sequence: 2, payload: 'live', final: false },
      { sequence: 3, payload: 'final', final: true },
    ]);
    await eventually(() => results.log.followers(id!) === 0, 5000, 'the follower to end');
  });

  it('forwards the delivery guarantee asked in the arguments and its confirmation in the delivery field, where extensions do not pass', async () => {
    const [id] = await createTests('hive-guarantee', 1);
    await append(id!, { sequence: 1, payload: 'stored' });
    const token = await mintToken();
    const client = createWsClient(hiveUrl, { connectionParams: { authorization: `Bearer ${token}` } });
    const query = 'subscription($id: ID!) { testMessages(correlationId: $id, deliveryGuarantee: AT_LEAST_ONCE) { sequence delivery { guarantee durable } } }';
    const sub = collect<{ testMessages: { sequence: number; delivery: unknown } }>(client, query, { id });
    await sub.waitFor(1);
    await append(id!, { sequence: 2, payload: 'final', final: true });
    await sub.done;
    await client.dispose();
    expect(sub.results.map((result) => result.errors ?? result.data?.testMessages)).toEqual([
      { sequence: 1, delivery: { guarantee: 'AT_LEAST_ONCE', durable: 'none' } },
      { sequence: 2, delivery: null },
    ]);
  });

  it('forwards testChanges to a graphql-ws client: a test started, then its new status and message count', async () => {
    const changes = await subscribeChanges({
      url: hiveUrl,
      token: await mintToken(),
      query: 'subscription { testChanges { kind test { correlationId status messageCount } } }',
      owner: 'tester',
      probeLog: results.log,
    });
    const [id] = await createTests('hive-changes', 1);
    await append(id!, { sequence: 1, payload: 'done', final: true });
    await eventually(() => changes.of(id!).at(-1)?.test.messageCount === 1, 5000, 'the message count to arrive');
    await changes.client.dispose();
    expect(changes.of(id!)[0]).toEqual({ kind: 'CREATED', test: { correlationId: id, status: 'PENDING', messageCount: 0 } });
    expect(changes.of(id!).at(-1)).toMatchObject({ kind: 'UPDATED', test: { correlationId: id, messageCount: 1 } });
  });

  it('forwards the token over HTTP: refused when missing or wrong', async () => {
    const [id] = await createTests('hive-refused', 1);
    buildTests.set('build-5', [id!]);
    const query = '{ build(id: "build-5") { id tests { correlationId status } } }';
    for (const token of [null, await mintToken({}, { secret: 'another-secret-of-at-least-thirty-two-bytes' })]) {
      const { body } = await postGraphQL(hiveUrl, query, undefined, { token });
      expect(body.data).toEqual({ build: { id: 'build-5', tests: [null] } });
      expect(codes(body.errors)).toEqual(['UNAUTHENTICATED']);
    }
  });
});
