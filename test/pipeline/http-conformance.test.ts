/**
 * GraphQL over HTTP conformance, by graphql-http's own server audits (the reference implementation's
 * checks of the spec), run against /graphql with a bearer token: every MUST passes, among them the
 * content negotiation by `Accept` (application/json, application/graphql-response+json, none, or a
 * wildcard). The SHOULDs it warns about are the three statuses the service chooses on purpose: a
 * document that does not parse or validate, or variables that do not coerce, answer 400 whatever
 * the client accepts (docs/api.md), not 200 for application/json. The service runs without a
 * broker (the pipeline's harness).
 */
import { auditServer } from 'graphql-http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startPipelineService();
});

afterAll(() => svc?.stop());

it("passes every MUST of graphql-http's server audits, and warns only where a 400 is chosen on purpose", { timeout: 60_000 }, async () => {
  const token = await defaultToken();
  const results = await auditServer({
    url: `${svc.url}/graphql`,
    fetchFn: (input: RequestInfo, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    },
  });
  expect(results.length).toBeGreaterThan(50);
  const failed = results.flatMap((result) => (result.status === 'error' ? [`${result.id} ${result.name}: ${result.reason}`] : []));
  expect(failed).toEqual([]);
  expect(results.filter((result) => result.status === 'warn').map((result) => result.id)).toEqual(['572B', 'FDE2', '7B9B']);
});
