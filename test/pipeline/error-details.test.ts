/**
 * GraphQL error answers carry no stack trace and no file path, over HTTP and WebSocket, unless
 * GRAPHQL_DEBUG_ERRORS asks for them; an unexpected error's own message is masked the same way.
 * An unexpected error is logged once with a request id, and the client is given that id.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultLog } from '../../src/log/result-log.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';

const LEAK = "ENOENT: no such file or directory, open '/srv/secret/state.db'";
const services: TestService[] = [];
const logLines: Array<{ msg?: string; requestId?: string; err?: { message?: string } }> = [];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// The log lines of unexpected errors that carry this request id.
const loggedWith = (requestId: unknown) => logLines.filter((line) => line.requestId === requestId && line.err?.message === LEAK);

// A store whose read of one id fails the way a bug or a broken dependency would.
const failingOn = (store: ResultLog): ResultLog => ({
  ...store,
  get: async (id) => {
    if (id === 'explode') throw new Error(LEAK);
    return store.get(id);
  },
  getMany: async (ids) => {
    if (ids.includes('explode')) throw new Error(LEAK);
    return store.getMany(ids);
  },
});

async function serviceWith(env: Record<string, string>): Promise<TestService> {
  const svc = await startPipelineService({
    env,
    wrapLog: failingOn,
    logger: pino({ level: 'error' }, { write: (line: string) => void logLines.push(JSON.parse(line) as (typeof logLines)[number]) }),
  });
  services.push(svc);
  return svc;
}

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
});

const PATHS = /\/(work|srv|home|app)\/|\.ts:\d+|node_modules|at [\w.<>]+ \(/;

describe.each([
  ['development (the default)', {}],
  ['production', { NODE_ENV: 'production' }],
])('GraphQL errors in %s', (_name, env) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await serviceWith(env);
  });

  it('carry no stack trace or file path for a client error', async () => {
    const response = await postGraphQL(svc.url, '{ test(correlationId: "x") { nope } }');
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
    expect(JSON.stringify(response.body)).not.toMatch(PATHS);
  });

  it('mask an unexpected error: neither its message nor where it happened', async () => {
    const response = await postGraphQL(svc.url, '{ test(correlationId: "explode") { status } }');
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.body.errors).toEqual([
      { message: 'Internal server error', locations: [{ line: 1, column: 3 }], path: ['test'], extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } },
    ]);
    expect(JSON.stringify(response.body)).not.toMatch(PATHS);
    expect(loggedWith(requestId)).toHaveLength(1);
  });

  it('mask an unexpected error over the WebSocket, with the request id of its log line', async () => {
    const client = createWsClient(svc.url);
    try {
      const sub = collect(client, '{ test(correlationId: "explode") { status } }');
      await sub.done;
      const errors = sub.results.flatMap((r) => (r as { errors?: Array<{ extensions?: { requestId?: unknown } }> }).errors ?? []);
      const requestId = errors[0]?.extensions?.requestId;
      expect(requestId).toMatch(UUID);
      expect(errors).toEqual([
        { message: 'Internal server error', locations: [{ line: 1, column: 3 }], path: ['test'], extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } },
      ]);
      expect(loggedWith(requestId)).toHaveLength(1);
    } finally {
      await client.dispose();
    }
  });

  it('answer an unexpected REST error with a 500 problem carrying the request id of its log line', async () => {
    const response = await authedFetch(`${svc.url}/tests/explode`);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    expect(response.status).toBe(500);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'Internal server error',
      instance: '/tests/explode',
      code: 'INTERNAL_SERVER_ERROR',
      requestId,
    });
    expect(loggedWith(requestId)).toHaveLength(1);
  });

  it('carry no stack trace over the WebSocket either', async () => {
    const client = createWsClient(svc.url);
    try {
      const sub = collect(client, 'subscription { testMessages(correlationId: "no-such-test") { sequence } }');
      const rejected = await sub.done.then(
        () => [],
        (error: unknown) => (Array.isArray(error) ? error : [error]),
      );
      const errors = [...sub.results.flatMap((r) => (r as { errors?: unknown[] }).errors ?? []), ...rejected];
      expect(errors.length).toBeGreaterThan(0);
      expect(JSON.stringify(errors)).toMatch(/NOT_FOUND/);
      expect(JSON.stringify(errors)).not.toMatch(/stacktrace/);
      expect(JSON.stringify(errors)).not.toMatch(PATHS);
    } finally {
      await client.dispose();
    }
  });
});

describe('request ids', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await serviceWith({ NODE_ENV: 'production' });
  });

  it('honour a well-formed incoming X-Request-Id, in the header, the error and the log line', async () => {
    const response = await postGraphQL(svc.url, '{ test(correlationId: "explode") { status } }', undefined, {
      headers: { 'x-request-id': 'edge-proxy.42:abc' },
    });
    expect(response.headers.get('x-request-id')).toBe('edge-proxy.42:abc');
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId: 'edge-proxy.42:abc' });
    expect(loggedWith('edge-proxy.42:abc')).toHaveLength(1);
  });

  it('replace a malformed incoming X-Request-Id by a new one', async () => {
    const response = await fetch(`${svc.url}/healthz`, { headers: { 'x-request-id': 'has spaces "and quotes"' } });
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    const long = await fetch(`${svc.url}/healthz`, { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers.get('x-request-id')).toMatch(UUID);
  });

  it('differ between requests', async () => {
    const [a, b] = await Promise.all([fetch(`${svc.url}/healthz`), fetch(`${svc.url}/healthz`)]);
    expect(a.headers.get('x-request-id')).toMatch(UUID);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('GraphQL errors with GRAPHQL_DEBUG_ERRORS=true', () => {
  it("carry the stack trace and the unexpected error's own message", async () => {
    const svc = await serviceWith({ GRAPHQL_DEBUG_ERRORS: 'true' });
    const response = await postGraphQL(svc.url, '{ test(correlationId: "explode") { status } }');
    const [error] = response.body.errors ?? [];
    expect(error?.message).toBe(LEAK);
    expect(error?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(Array.isArray(error?.extensions?.stacktrace)).toBe(true);
  });
});
