/**
 * Abusive operation shapes on HTTP and WebSocket alike: circular (deeply nested) introspection and
 * circular fragments are refused before execution, while an IDE's introspection query still works;
 * duplicated fields are refused by the token limit, or merged and resolved once within it. The
 * services run without a broker (the pipeline's harness).
 */
import { getIntrospectionQuery, MaxIntrospectionDepthRule, parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOperationLimits } from '../../src/graphql/pipeline/plugins/operation-limits.js';
import { createSchema } from '../../src/graphql/schema/schema.js';
import type { ResultLog } from '../../src/log/result-log.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';

/** Default limits (1000 parser tokens). */
let svc: TestService;
/** The largest token budget configuration allows, to see what the other checks do with a flood. */
let roomy: TestService;
/** Reads of the result log per service: a resolver running once per copy of a field would show here. */
const reads = { svc: 0, roomy: 0 };

const counting =
  (name: keyof typeof reads) =>
  (store: ResultLog): ResultLog => ({
    ...store,
    get: (id) => {
      reads[name] += 1;
      return store.get(id);
    },
    getMany: (ids) => {
      reads[name] += 1;
      return store.getMany(ids);
    },
  });

beforeAll(async () => {
  svc = await startPipelineService({ wrapLog: counting('svc') });
  roomy = await startPipelineService({ env: { GRAPHQL_MAX_TOKENS: '100000' }, wrapLog: counting('roomy') });
});

afterAll(async () => {
  await roomy?.stop();
  await svc?.stop();
});

type Errors = Array<{ message: string; extensions?: Record<string, unknown> }>;
type Outcome = { data?: Record<string, any> | null; errors: Errors };

/** What a graphql-ws operation ends with: its data and errors, or the error it is refused with. */
async function overWebSocket(url: string, query: string): Promise<Outcome> {
  const client = createWsClient(url);
  const sub = collect(client, query);
  const outcome = await sub.done.then(
    () => ({ data: sub.results.at(-1)?.data as Outcome['data'], errors: sub.results.flatMap((result) => (result.errors ?? []) as Errors) }),
    (errors: unknown) => ({ errors: errors as Errors }),
  );
  await client.dispose();
  return outcome;
}

/** Posts over HTTP and runs over WebSocket; both answers. */
async function both(url: string, query: string): Promise<{ status: number; http: Outcome; ws: Outcome }> {
  const response = await postGraphQL(url, query);
  return { status: response.status, http: { data: response.body.data, errors: (response.body.errors ?? []) as Errors }, ws: await overWebSocket(url, query) };
}

/** `__schema { types { fields { type { fields { type { … name … } } } } } }`, `levels` pairs deep. */
function circularIntrospection(levels: number): string {
  const open = 'fields { type { '.repeat(levels);
  const close = '} } '.repeat(levels);
  return `{ __schema { types { ${open}name ${close}} } }`;
}

async function startTest(url: string): Promise<string> {
  const started = await postGraphQL<{ startTest: { correlationId: string } }>(url, 'mutation { startTest { correlationId } }');
  expect(started.body.errors).toBeUndefined();
  return started.body.data!.startTest.correlationId;
}

describe('circular introspection and fragments', () => {
  it('refuses a deeply nested introspection query before execution, on both transports', async () => {
    const refused = await both(svc.url, circularIntrospection(10));
    expect(refused.status).toBe(400);
    for (const outcome of [refused.http, refused.ws]) {
      expect(outcome.data ?? undefined).toBeUndefined();
      expect(outcome.errors).toHaveLength(1);
      expect(outcome.errors[0]).toMatchObject({ message: 'Maximum introspection depth exceeded', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    }
    // The same shape through `ofType` and fragments, as the published attack writes it.
    const viaFragments = `{ __schema { types { ...T } } }
      fragment T on __Type { fields { type { ...R } } }
      fragment R on __Type { ofType { fields { type { ofType { fields { name } } } } } }`;
    const fragmented = await both(svc.url, viaFragments);
    expect(fragmented.status).toBe(400);
    for (const outcome of [fragmented.http, fragmented.ws]) {
      expect(outcome.errors[0]).toMatchObject({ message: 'Maximum introspection depth exceeded', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    }
    // The other budgets are no help here: introspection fields do not count towards depth, and the
    // whole flood is well within the cost budget (and 69 tokens of 1000); graphql-js's introspection
    // depth rule is what refuses it.
    const schema = createSchema();
    const document = parse(circularIntrospection(10));
    expect(checkOperationLimits(schema, document, undefined, undefined, svc.config.graphql)).toEqual([]);
    expect(validate(schema, document, [MaxIntrospectionDepthRule]).map((error) => error.message)).toEqual(['Maximum introspection depth exceeded']);
    expect(await both(svc.url, circularIntrospection(1))).toMatchObject({ status: 200, http: { errors: [] }, ws: { errors: [] } });
  });

  it("still answers a GraphQL IDE's standard introspection query, on both transports", async () => {
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true });
    const answered = await both(svc.url, query);
    expect(answered.status).toBe(200);
    for (const outcome of [answered.http, answered.ws]) {
      expect(outcome.errors).toEqual([]);
      expect(outcome.data?.__schema.queryType).toEqual({ name: 'Query', kind: 'OBJECT' });
      expect(outcome.data?.__schema.types.map((type: { name: string }) => type.name)).toContain('Test');
    }
  });

  it('refuses circular fragments with GRAPHQL_VALIDATION_FAILED, on both transports', async () => {
    const before = reads.svc;
    const cycle = '{ test(correlationId: "x") { ...A } } fragment A on Test { status ...B } fragment B on Test { correlationId ...A }';
    const refused = await both(svc.url, cycle);
    expect(refused.status).toBe(400);
    for (const outcome of [refused.http, refused.ws]) {
      expect(outcome.data ?? undefined).toBeUndefined();
      expect(outcome.errors).toHaveLength(1);
      expect(outcome.errors[0]).toMatchObject({
        message: 'Cannot spread fragment "A" within itself via "B".',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
    }
    const self = await both(svc.url, '{ test(correlationId: "x") { ...A } } fragment A on Test { ...A }');
    for (const outcome of [self.http, self.ws]) {
      expect(outcome.errors[0]).toMatchObject({ message: 'Cannot spread fragment "A" within itself.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    }
    expect(reads.svc).toBe(before);
  });
});

describe('duplicated fields', () => {
  it('refuses 5,000 copies of a field with QUERY_TOO_MANY_TOKENS under the default budget, before any read', async () => {
    const id = await startTest(svc.url);
    const before = reads.svc;
    const refused = await both(svc.url, `{ test(correlationId: "${id}") { ${'status '.repeat(5000)}} }`);
    expect(refused.status).toBe(400);
    for (const outcome of [refused.http, refused.ws]) {
      expect(outcome.data ?? undefined).toBeUndefined();
      expect(outcome.errors).toEqual([
        expect.objectContaining({
          message: 'Token limit of 1000 exceeded.',
          extensions: expect.objectContaining({ code: 'QUERY_TOO_MANY_TOKENS', maxTokens: 1000 }),
        }),
      ]);
    }
    expect(reads.svc).toBe(before);
  });

  it('merges copies of a field that fit the default budget: the right answer, one read per operation', async () => {
    const id = await startTest(svc.url);
    const single = await postGraphQL(svc.url, `{ test(correlationId: "${id}") { correlationId status } }`);
    const expected = single.body.data;
    expect(expected?.test).toMatchObject({ correlationId: id });

    let before = reads.svc;
    const scalars = await both(svc.url, `{ test(correlationId: "${id}") { correlationId ${'status '.repeat(300)}} }`);
    expect(scalars.status).toBe(200);
    for (const outcome of [scalars.http, scalars.ws]) expect(outcome).toEqual({ data: expected, errors: [] });
    // One read over HTTP and one over WebSocket, not one per copy.
    expect(reads.svc - before).toBe(2);

    before = reads.svc;
    const parents = await both(svc.url, `{ ${`test(correlationId: "${id}") { correlationId status } `.repeat(40)}}`);
    expect(parents.status).toBe(200);
    for (const outcome of [parents.http, parents.ws]) expect(outcome).toEqual({ data: expected, errors: [] });
    expect(reads.svc - before).toBe(2);
  });

  it("refuses 5,000 copies under a raised token budget with GRAPHQL_VALIDATION_FAILED (the merge check's own budget), before any read", async () => {
    const id = await startTest(roomy.url);
    const before = reads.roomy;
    const refused = await both(roomy.url, `{ test(correlationId: "${id}") { correlationId ${'status '.repeat(5000)}} }`);
    expect(refused.status).toBe(400);
    for (const outcome of [refused.http, refused.ws]) {
      expect(outcome.data ?? undefined).toBeUndefined();
      expect(outcome.errors).toEqual([
        expect.objectContaining({ message: 'Validation aborted.', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) }),
      ]);
    }
    expect(reads.roomy).toBe(before);
  });

  it('refuses one alias repeated 500 times with QUERY_TOO_MANY_ALIASES, and 5,000 times (over 64 KiB) with close 1009 over WebSocket, before any read', async () => {
    const id = await startTest(roomy.url);
    const before = reads.roomy;
    const refused = await both(roomy.url, `{ ${`t: test(correlationId: "${id}") { status } `.repeat(500)}}`);
    expect(refused.status).toBe(400);
    for (const outcome of [refused.http, refused.ws]) {
      expect(outcome.data ?? undefined).toBeUndefined();
      // The alias limit, and the merge check giving up on that many copies to compare.
      expect(outcome.errors).toEqual([
        expect.objectContaining({
          message: 'Aliases limit of 15 exceeded, found 500.',
          extensions: expect.objectContaining({ code: 'QUERY_TOO_MANY_ALIASES', maxAliases: 15 }),
        }),
        expect.objectContaining({ message: 'Validation aborted.', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) }),
      ]);
    }
    // 5,000 copies make a message over WS_MAX_MESSAGE_BYTES (64 KiB): the socket closes with 1009
    // before anything is parsed; HTTP refuses it as above.
    const flood = `{ ${`t: test(correlationId: "${id}") { status } `.repeat(5000)}}`;
    const http = await postGraphQL(roomy.url, flood);
    expect(http.status).toBe(400);
    expect(http.body.errors?.map((error) => error.extensions?.code)).toEqual(['QUERY_TOO_MANY_ALIASES', 'GRAPHQL_VALIDATION_FAILED']);
    const client = createWsClient(roomy.url);
    const closed = await collect(client, flood).done.then(
      () => undefined,
      (event: { code?: number }) => event.code,
    );
    await client.dispose();
    expect(closed).toBe(1009);
    expect(reads.roomy).toBe(before);
  });
});
