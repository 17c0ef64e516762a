/**
 * Names a client writes that match Object.prototype's members (operation and fragment names,
 * aliases, variables, the operationName it asks for), on every transport: an ordinary answer or a
 * typed refusal, never a 500. graphql-depth-limit indexed operations and fragments by name in plain
 * objects (src/graphql/pipeline/opaque-names.ts says how it is kept from them).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, postGraphQL, subscriptionTransports } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startPipelineService();
});
afterAll(async () => {
  await svc?.stop();
});

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'toLocaleString'];
const LIST = 'tests(correlationIds: []) { correlationId }';
/** The codes a refusal of these documents may carry: each a client's mistake, none the server's. */
const REFUSALS = ['OPERATION_RESOLUTION_FAILURE', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST'];

interface Answer {
  readonly status?: number;
  readonly data?: unknown;
  readonly codes: string[];
}

/** One operation over HTTP, graphql-ws or SSE, answered as data or as the codes of its errors. */
type Send = (request: { query: string; operationName?: string; variables?: Record<string, unknown> }) => Promise<Answer>;
const transports: Array<[string, Send]> = [
  [
    'HTTP',
    async (request) => {
      const { status, body } = await postGraphQL(svc.url, request, request.variables);
      return { status, data: body.data, codes: (body.errors ?? []).map((e: { extensions?: { code?: string } }) => String(e.extensions?.code)) };
    },
  ],
  ...subscriptionTransports.map((transport): [string, Send] => [
    transport.name,
    async (request) => {
      const client = transport.client(svc.url);
      const sub = collect(client, request, request.variables);
      const end = await sub.done.then(
        () => undefined,
        (error: unknown) => error,
      );
      const errors = [...sub.results.flatMap((r) => r.errors ?? []), ...(Array.isArray(end) ? end : end === undefined ? [] : [end])] as Array<{
        extensions?: { code?: string };
        response?: Response;
      }>;
      // graphql-sse's client fails with the response of a stream refused before it opened: read before the client is disposed.
      const refused = errors.find((e) => e.response !== undefined)?.response;
      const body = refused === undefined ? undefined : ((await refused.json()) as { errors: Array<{ extensions?: { code?: string } }> });
      await client.dispose();
      return {
        ...(refused === undefined ? {} : { status: refused.status }),
        data: sub.results[0]?.data,
        codes: [...errors.filter((e) => e.response === undefined), ...(body?.errors ?? [])].map((e) => String(e.extensions?.code)),
      };
    },
  ]),
];

describe.each(transports)('prototype names over %s', (transportName, send) => {
  // What any absent operation name gets on this transport (test/pipeline/graphql-pipeline.test.ts):
  // Apollo Server's code over HTTP, the lifecycle's over the streaming transports.
  const absent = transportName === 'HTTP' ? 'OPERATION_RESOLUTION_FAILURE' : 'BAD_USER_INPUT';
  it.each(PROTOTYPE_NAMES)('%s: as an operation name, an absent one, and a fragment name defined or not', async (name) => {
    expect(await send({ query: `query ${name} { ${LIST} }`, operationName: name })).toMatchObject({ data: { tests: [] }, codes: [] });
    expect(await send({ query: `query A { ${LIST} } query ${name} { ${LIST} }`, operationName: name })).toMatchObject({ data: { tests: [] }, codes: [] });
    expect((await send({ query: `query A { ${LIST} }`, operationName: name })).codes).toEqual([absent]);
    expect((await send({ query: `query A { tests(correlationIds: []) { ...${name} } }` })).codes).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(await send({ query: `query A { tests(correlationIds: []) { ...${name} } } fragment ${name} on Test { correlationId }` })).toMatchObject({
      data: { tests: [] },
      codes: [],
    });
  });

  it('answers any mix of such names in any place with data or a typed refusal, never a server error', async () => {
    const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) }, { weight: 1, arbitrary: fc.constantFrom('A', 'b', 'Test', 'q1') });
    await fc.assert(
      fc.asyncProperty(
        fc.record({ operation: name, asked: fc.option(name), fragment: name, spread: name, alias: name, variable: name }),
        async ({ operation, asked, fragment, spread, alias, variable }) => {
          const query = `query ${operation}($${variable}: [ID!]! = []) { ${alias}: tests(correlationIds: $${variable}) { ...${spread} } } fragment ${fragment} on Test { correlationId }`;
          const answer = await send({ query, ...(asked === null ? {} : { operationName: asked }) });
          expect(answer.status ?? 200).toBeLessThan(500);
          for (const code of answer.codes) expect(REFUSALS).toContain(code);
          if (answer.codes.length === 0) expect(answer.data).toEqual({ [alias]: [] });
        },
      ),
      { numRuns: transportName === 'HTTP' ? 60 : 20 },
    );
  }, 60_000);
});
