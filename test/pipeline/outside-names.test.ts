/**
 * No name a client sends reaches a prototype: operation and fragment names matching
 * `Object.prototype` members (which graphql-depth-limit indexes in plain objects) get an ordinary
 * result or a typed refusal over HTTP, graphql-ws and SSE, on the memory and the Redis store.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { postGraphQL, sseErrors, wsErrors, type ClientErrors } from '../support/graphql.js';
import { authedFetch } from '../support/tokens.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { PROTOTYPE_NAMES } from '../support/prototype-names.js';

const redisLogs = useRedisLogs('outside-names');
const stores = [
  { name: 'memory', log: () => undefined },
  { name: 'redis', log: () => redisLogs.createLog() },
] as const;

/** What one transport answered: an error code per error, or none. */
interface Outcome {
  readonly status?: number;
  readonly codes: readonly string[];
  readonly typename?: unknown;
}

type Request = { query: string; operationName?: string };

async function overHttp(url: string, request: Request): Promise<Outcome> {
  return overHttpWith(url, request);
}

async function overHttpWith(url: string, request: Request, variables?: Record<string, unknown>): Promise<Outcome> {
  const { status, body } = await postGraphQL(url, request, variables);
  return {
    status,
    codes: (body.errors ?? []).map((e) => String(e.extensions?.code)),
    typename: (body.data as { __typename?: unknown } | null | undefined)?.__typename,
  };
}

const codesOf = (errors: ClientErrors & { status?: number }): Outcome => ({
  ...(errors.status === undefined ? {} : { status: errors.status }),
  codes: errors.map((e) => String(e.extensions?.code)),
});

const transports = [
  { name: 'HTTP', run: overHttp },
  { name: 'graphql-ws', run: async (url: string, request: Request) => codesOf(await wsErrors(url, request)) },
  { name: 'SSE', run: async (url: string, request: Request) => codesOf(await sseErrors(url, request)) },
] as const;

describe.each(stores)('outside names on the $name store', (store) => {
  let svc: TestService;
  beforeAll(async () => {
    const log = store.log();
    svc = await startPipelineService(log === undefined ? {} : { log });
  }, 60_000);
  afterAll(() => svc?.stop());

  describe.each(transports)('over $name', (transport) => {
    it.each(PROTOTYPE_NAMES)('an operation named %s is run', async (name) => {
      const outcome = await transport.run(svc.url, { query: `query ${name} { __typename } query other { __typename }`, operationName: name });
      expect(outcome.codes).toEqual([]);
      if (transport.name === 'HTTP') expect(outcome).toMatchObject({ status: 200, typename: 'Query' });
    });

    it.each(PROTOTYPE_NAMES)('an absent operation named %s is refused as any absent name is', async (name) => {
      const outcome = await transport.run(svc.url, { query: 'query a { __typename } query b { __typename }', operationName: name });
      const control = await transport.run(svc.url, { query: 'query a { __typename } query b { __typename }', operationName: 'absent' });
      expect(control.codes.length).toBeGreaterThan(0);
      expect(control.codes).not.toContain('INTERNAL_SERVER_ERROR');
      expect(outcome).toEqual(control);
    });

    it.each(PROTOTYPE_NAMES)('an undefined spread ...%s is refused as graphql-js validation refuses any', async (name) => {
      const outcome = await transport.run(svc.url, { query: `query q { ...${name} }` });
      expect(outcome.codes).toEqual(['GRAPHQL_VALIDATION_FAILED']);
      if (transport.name === 'HTTP') expect(outcome.status).toBe(400);
    });

    it.each(PROTOTYPE_NAMES)('a fragment named %s is used', async (name) => {
      const outcome = await transport.run(svc.url, { query: `query q { ...${name} } fragment ${name} on Query { __typename }` });
      expect(outcome.codes).toEqual([]);
      if (transport.name === 'HTTP') expect(outcome).toMatchObject({ status: 200, typename: 'Query' });
    });
  });

  describe('property: any names on the request path', () => {
    /** A GraphQL name, an Object.prototype member three times in four. */
    const name = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
      { weight: 1, arbitrary: fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,8}$/) },
    );
    const operation = fc.record({
      op: name,
      frag: name,
      spread: fc.option(name, { nil: undefined }),
      alias: name,
      variable: name,
      directive: fc.option(name, { nil: undefined }),
      argument: fc.option(name, { nil: undefined }),
      operationName: fc.option(name, { nil: undefined }),
      extraVariable: name,
    });
    const toRequest = (o: Record<string, string | undefined>) => {
      const directive = o.directive === undefined ? `@include(if: $${o.variable})` : `@${o.directive}`;
      const argument = o.argument === undefined ? '' : `, ${o.argument}: 1`;
      const query =
        `query ${o.op}($${o.variable}: Boolean = true) { ${o.alias}: __typename ${directive} ...${o.spread ?? o.frag} ` +
        `test(correlationId: "${o.frag}"${argument}) { correlationId } } fragment ${o.frag} on Query { __typename }`;
      return {
        query,
        ...(o.operationName === undefined ? {} : { operationName: o.operationName }),
        variables: { [o.variable as string]: true, [o.extraVariable as string]: 1 },
      };
    };
    /** Every error is typed, none is the masked internal one, and HTTP never answers 5xx. */
    const typed = (outcome: Outcome) => {
      if (outcome.status !== undefined) expect(outcome.status).toBeLessThan(500);
      for (const code of outcome.codes) {
        expect(code).not.toBe('undefined');
        expect(code).not.toBe('INTERNAL_SERVER_ERROR');
      }
    };

    it.each(transports)(
      'over $name: an ordinary result or a typed refusal',
      async (transport) => {
        await fc.assert(
          fc.asyncProperty(operation, async (o) => {
            const { variables, ...request } = toRequest(o);
            const outcome =
              transport.name === 'HTTP'
                ? await overHttpWith(svc.url, request, variables)
                : transport.name === 'graphql-ws'
                  ? codesOf(await wsErrors(svc.url, request, variables))
                  : codesOf(await sseErrors(svc.url, request, variables));
            typed(outcome);
          }),
          { numRuns: 40 },
        );
      },
      30_000,
    );

    it('POST /tests: JSON keys, header names and Idempotency-Keys with any names', async () => {
      const json = fc.letrec((tie) => ({
        value: fc.oneof(
          { depthSize: 'small' },
          fc.integer(),
          fc.string({ maxLength: 4 }),
          fc.dictionary(name, tie('value'), { maxKeys: 3 }),
          fc.array(tie('value'), { maxLength: 2 }),
        ),
      })).value;
      await fc.assert(
        fc.asyncProperty(
          name,
          json,
          name,
          fc.option(
            fc.oneof(
              name,
              fc.uuid().map((u) => u.toUpperCase()),
            ),
            { nil: undefined },
          ),
          async (key, parameters, header, idempotencyKey) => {
            const response = await authedFetch(`${svc.url}/tests`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                [`x-${header}`]: '1',
                ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
              },
              body: JSON.stringify({ name: key, parameters: { [key]: parameters } }),
            });
            const body = (await response.json()) as { code?: unknown; correlationId?: unknown };
            expect(response.status === 202 || (response.status >= 400 && response.status < 500)).toBe(true);
            if (response.status === 202) {
              expect(typeof body.correlationId).toBe('string');
              const read = await authedFetch(`${svc.url}/tests/${body.correlationId as string}`);
              expect(read.status).toBe(200);
            } else expect(typeof body.code).toBe('string');
          },
        ),
        { numRuns: 40 },
      );
    }, 30_000);
  });
});
