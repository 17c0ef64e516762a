/**
 * A rule added as one plugin applies on every transport: the test gives the service one more
 * plugin (no other change) and sees it refuse, admit and count operations alike over HTTP,
 * graphql-ws and graphql-sse. The service runs in-process without a broker (the pipeline's harness).
 */
import { GraphQLError, type ValidationRule } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/base/errors.js';
import type { OperationPlugin, Transport } from '../../src/graphql/pipeline/operation-plugin.js';
import { postGraphQL, sseErrors, wsErrors } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';

/** Transports each hook saw, in order. */
const seen = { start: [] as Transport[], admit: [] as Transport[] };

/** Refuses any document that selects a field aliased `forbidden` (a validation rule: it depends on the document alone). */
const noForbiddenAlias: ValidationRule = (context) => ({
  Field(node) {
    if (node.alias?.value === 'forbidden')
      context.reportError(new GraphQLError('No field may be aliased "forbidden" here.', { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
  },
});

/** The plugin under test: refuses operations named `Blocked` when admitted, and records what it saw. */
const testPlugin: OperationPlugin = {
  name: 'test-plugin',
  validationRules: [noForbiddenAlias],
  onStart: ({ transport }) => void seen.start.push(transport),
  onAdmit: ({ operation, transport }) => {
    seen.admit.push(transport);
    return operation?.name?.value === 'Blocked' ? new ServiceError('FORBIDDEN', 'Operations named Blocked are refused by the test plugin.') : undefined;
  },
};

let svc: TestService;

beforeAll(async () => {
  svc = await startPipelineService({ plugins: [testPlugin] });
});

afterAll(async () => {
  await svc?.stop();
});

describe('a plugin added to the lifecycle', () => {
  it('refuses at admission with its own code on HTTP (with its status), graphql-ws and SSE (with its status)', async () => {
    const query = 'query Blocked { __typename }';
    const http = await postGraphQL(svc.url, query);
    expect(http.status).toBe(403);
    expect(http.body.errors).toEqual([{ message: 'Operations named Blocked are refused by the test plugin.', extensions: { code: 'FORBIDDEN' } }]);
    const ws = await wsErrors(svc.url, query);
    expect(ws).toEqual([{ message: 'Operations named Blocked are refused by the test plugin.', extensions: { code: 'FORBIDDEN' } }]);
    const sse = await sseErrors(svc.url, query);
    expect(sse.status).toBe(403);
    expect([...sse]).toEqual([{ message: 'Operations named Blocked are refused by the test plugin.', extensions: { code: 'FORBIDDEN' } }]);
  });

  it('adds its validation rule on every transport', async () => {
    const query = '{ forbidden: __typename }';
    const http = await postGraphQL(svc.url, query);
    expect(http.status).toBe(400);
    expect(http.body.errors?.[0]).toMatchObject({ message: 'No field may be aliased "forbidden" here.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect((await wsErrors(svc.url, query))[0]).toMatchObject({
      message: 'No field may be aliased "forbidden" here.',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    const sse = await sseErrors(svc.url, query);
    expect(sse.status).toBe(400);
    expect(sse[0]).toMatchObject({ message: 'No field may be aliased "forbidden" here.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('lets other operations run, having seen each start and admission on all three transports', async () => {
    seen.start.length = 0;
    seen.admit.length = 0;
    const query = 'query Allowed { __typename }';
    const http = await postGraphQL(svc.url, query);
    expect(http.status).toBe(200);
    expect(http.body).toEqual({ data: { __typename: 'Query' } });
    expect(await wsErrors(svc.url, query)).toEqual([]);
    expect([...(await sseErrors(svc.url, query))]).toEqual([]);
    expect(seen.start).toEqual(['http', 'websocket', 'sse']);
    expect(seen.admit).toEqual(['http', 'websocket', 'sse']);
  });
});
