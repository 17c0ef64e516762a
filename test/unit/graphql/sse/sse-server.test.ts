/**
 * The SSE binding at shutdown: disposing it cuts the open streams and refuses new ones with 503
 * SHUTTING_DOWN, rather than opening a stream only for the closing server to cut it. The binding
 * runs on a real HTTP server with the real operation pipeline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Principal } from '../../../../src/auth/principal.js';
import { createGraphQLSse, type GraphQLSse } from '../../../../src/graphql/sse/sse-server.js';
import { createTestPipeline } from '../../../support/pipeline.js';
import { createWriteCoalescer } from '../../../../src/graphql/fanout/write-coalescer.js';

const principal: Principal = {
  subject: 'alice',
  clientId: null,
  scopes: new Set([SCOPES.read, SCOPES.write]),
  expiresAt: Date.now() + 3_600_000,
  issuer: 'https://issuer.example',
};
let server: Server;
let sse: GraphQLSse;
let url: string;

beforeAll(async () => {
  const { pipeline, logger } = createTestPipeline();
  sse = createGraphQLSse({
    pipeline,
    logger,
    maxStreamsPerPrincipal: 5,
    maxBufferedBytes: 64 * 1024,
    drainTimeoutMs: 30_000,
    coalescer: createWriteCoalescer({ maxDelayMs: 0 }),
    delivery: { store: 'memory', durable: 'none' },
  });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => void sse.handle(Object.assign(req, { body: body === '' ? undefined : (JSON.parse(body) as unknown) }), res, principal));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const ask = () =>
  fetch(url, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });

describe('the SSE binding at shutdown', () => {
  it('serves a stream before it is disposed, and refuses one after with 503 SHUTTING_DOWN', async () => {
    const before = await ask();
    expect(before.status).toBe(200);
    expect(await before.text()).toContain('"__typename":"Query"');

    await sse.dispose();
    const after = await ask();
    expect(after.status).toBe(503);
    // With its reason phrase, which graphql-sse's client shows ("Server responded with 503: Service Unavailable").
    expect(after.statusText).toBe('Service Unavailable');
    expect(after.headers.get('retry-after')).toBe('1');
    expect(await after.json()).toEqual({ errors: [{ message: expect.stringMatching(/shutting down/), extensions: { code: 'SHUTTING_DOWN' } }] });
  });
});
