/**
 * A rule added as one plugin applies on every transport: the test gives the service one more
 * plugin (no other change) and sees it refuse, admit and count operations alike over HTTP,
 * graphql-ws and graphql-sse. The service runs in-process without a broker (the pipeline's harness).
 */
import { randomUUID } from 'node:crypto';
import { GraphQLError, type ValidationRule } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/base/errors.js';
import type { OperationPlugin, Transport } from '../../src/graphql/pipeline/operation-plugin.js';
import { incoming } from '../log/storage-contract.js';
import { collect, createSseClient, createWsClient, eventually, postGraphQL, sseErrors, wsErrors } from '../support/graphql.js';
import { startPipelineService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

/** Transports each hook saw, in order; the events pushed, with the subscribers each reached once it ended. */
const seen = {
  start: [] as Transport[],
  admit: [] as Transport[],
  events: [] as Array<{ sequence: unknown; reached: number; ended: boolean }>,
  observed: [] as string[],
};

/** Refuses any document that selects a field aliased `forbidden` (a validation rule: it depends on the document alone). */
const noForbiddenAlias: ValidationRule = (context) => ({
  Field(node) {
    if (node.alias?.value === 'forbidden')
      context.reportError(new GraphQLError('No field may be aliased "forbidden" here.', { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
  },
});

/** How many times each document's text was validated (a rule sees every document validated). */
const validations = new Map<string, number>();
const countValidations: ValidationRule = () => ({
  Document(node) {
    const text = node.loc?.source.body ?? '';
    validations.set(text, (validations.get(text) ?? 0) + 1);
  },
});

/** The plugin under test: refuses operations named `Blocked` when admitted, and records what it saw. */
const testPlugin: OperationPlugin = {
  name: 'test-plugin',
  validationRules: [noForbiddenAlias, countValidations],
  onStart: ({ transport }) => void seen.start.push(transport),
  onAdmit: ({ operation, transport }) => {
    seen.admit.push(transport);
    return operation?.name?.value === 'Blocked' ? new ServiceError('FORBIDDEN', 'Operations named Blocked are refused by the test plugin.') : undefined;
  },
  // HTTP only: answers `Kept` itself.
  arrive: ({ json }) =>
    json?.operationName === 'Kept'
      ? { body: '{"data":{"kept":true}}\n', contentType: 'application/json; charset=utf-8', headers: { 'x-kept': 'yes' } }
      : undefined,
  // Follows `Observed` through its execution, and replaces the result of `Replaced`.
  onExecute: ({ operation, prepared, context }) => {
    const name = operation.name?.value;
    if (name === 'Replaced') return { onExecuteDone: () => ({ data: { __typename: 'Replaced' } }) };
    if (name !== 'Observed') return undefined;
    const transport = prepared.received.transport;
    seen.observed.push(`execute ${transport}`);
    return {
      onExecuteDone: (result) => void seen.observed.push(`done ${transport} ${JSON.stringify(result)} read ${[...context.loaders.reads.keys()].join(',')}`),
    };
  },
  onEvent: (event) => {
    const pushed = { sequence: (event as { sequence?: unknown }).sequence, reached: 0, ended: false };
    seen.events.push(pushed);
    return { reached: () => void (pushed.reached += 1), end: () => void (pushed.ended = true) };
  },
};

let svc: Awaited<ReturnType<typeof startPipelineService>>;

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

  it('parses and validates a document once for every transport: Apollo Server is handed the one HTTP prepared', async () => {
    const query = 'query ValidatedOnce { __typename }';
    for (let i = 0; i < 2; i++) expect((await postGraphQL(svc.url, query)).body).toEqual({ data: { __typename: 'Query' } });
    expect(await wsErrors(svc.url, query)).toEqual([]);
    expect([...(await sseErrors(svc.url, query))]).toEqual([]);
    expect(validations.get(query)).toBe(1);
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

  it('answers an HTTP request it kept before any other step; streamed operations never arrive', async () => {
    seen.start.length = 0;
    const kept = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await defaultToken()}` },
      body: JSON.stringify({ query: 'query Kept { __typename }', operationName: 'Kept' }),
    });
    expect(kept.status).toBe(200);
    expect(kept.headers.get('x-kept')).toBe('yes');
    expect(kept.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await kept.text()).toBe('{"data":{"kept":true}}\n');
    expect(seen.start).toEqual([]);
    // Over graphql-ws and SSE the operation runs (no answer was kept for them), and is admitted.
    expect(await wsErrors(svc.url, { query: 'query Kept { __typename }', operationName: 'Kept' })).toEqual([]);
    expect([...(await sseErrors(svc.url, { query: 'query Kept { __typename }', operationName: 'Kept' }))]).toEqual([]);
    expect(seen.start).toEqual(['websocket', 'sse']);
  });

  it('executes queries between its execute hooks on every transport: it sees the result and what the operation read, and may replace it', async () => {
    seen.observed.length = 0;
    const id = randomUUID();
    const observed = { query: 'query Observed($id: ID!) { test(correlationId: $id) { status } }', operationName: 'Observed' };
    const http = await postGraphQL(svc.url, observed, { id: id.toUpperCase() });
    expect(http.body).toEqual({ data: { test: null } });
    expect(await wsErrors(svc.url, observed, { id })).toEqual([]);
    expect([...(await sseErrors(svc.url, observed, { id }))]).toEqual([]);
    const result = JSON.stringify({ data: { test: null } });
    // HTTP's context keeps what it read (by the test's one spelling); a streamed operation's keeps nothing.
    expect(seen.observed).toEqual([
      `execute http`,
      `done http ${result} read ${id}`,
      'execute websocket',
      `done websocket ${result} read `,
      'execute sse',
      `done sse ${result} read `,
    ]);
    const replaced = 'query Replaced { __typename }';
    expect((await postGraphQL(svc.url, replaced)).body).toEqual({ data: { __typename: 'Replaced' } });
    // The response cache keeps the result as sent (a `__typename` query is one it keeps): its hit is the replacement too.
    const again = await postGraphQL(svc.url, replaced);
    expect(again.headers.get('cache-status')).toContain('hit');
    expect(again.body).toEqual({ data: { __typename: 'Replaced' } });
    const ws = createWsClient(svc.url);
    const sse = createSseClient(svc.url);
    try {
      for (const client of [ws, sse]) {
        const run = collect(client, replaced, {});
        await run.done;
        expect(run.results).toEqual([{ data: { __typename: 'Replaced' } }]);
      }
    } finally {
      await Promise.all([ws.dispose(), sse.dispose()]);
    }
  });

  it('follows each subscription event once, however many subscribers it reaches over graphql-ws and SSE', async () => {
    const started = await postGraphQL(svc.url, 'mutation { startTest { correlationId } }');
    const id = started.body.data?.startTest.correlationId as string;
    const follow = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }';
    const clients = [createWsClient(svc.url), createSseClient(svc.url)];
    const subs = clients.map((client) => collect(client, follow, { id }));
    // Subscribed on both once the test's change feed delivers to them: wait for a first live message.
    const message = (sequence: number, final = false) => incoming(id, { sequence, final });
    await eventually(async () => {
      await svc.memoryBroker.deliver([message(1)]);
      return subs.every((sub) => sub.results.length >= 1);
    });
    seen.events.length = 0;
    await svc.memoryBroker.deliver([message(2), message(3, true)]);
    await Promise.all(subs.map((sub) => sub.done));
    await Promise.all(clients.map((client) => client.dispose()));
    for (const sub of subs) expect(sub.results.map((r) => r.data?.testMessages.sequence)).toEqual([1, 2, 3]);
    // Each event's observer ends once the turn that wrote it to its subscribers is over. Both
    // subscribers are reached in one turn on a quiet machine; on a busy one a late subscriber
    // executes the event in a later turn, under an observer of its own: count per sequence.
    await eventually(() => seen.events.every((event) => event.ended), 5_000, 'each event observed to its end');
    const reachedBySequence = new Map<unknown, number>();
    for (const event of seen.events) reachedBySequence.set(event.sequence, (reachedBySequence.get(event.sequence) ?? 0) + event.reached);
    expect([...reachedBySequence]).toEqual([
      [2, 2],
      [3, 2],
    ]);
  });
});
