/**
 * No name a client sends reaches a prototype: operation and fragment names matching
 * `Object.prototype` members (which graphql-depth-limit indexes in plain objects) get an ordinary
 * result or a typed refusal over HTTP, graphql-ws and SSE, on the memory and the Redis store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { postGraphQL, sseErrors, wsErrors, type ClientErrors } from '../support/graphql.js';
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
  const { status, body } = await postGraphQL(url, request);
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
});
