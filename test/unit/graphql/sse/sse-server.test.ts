/**
 * The SSE binding at shutdown: disposing it cuts the open streams and refuses new ones with 503
 * SHUTTING_DOWN, rather than opening a stream only for the closing server to cut it. The binding
 * runs on a real HTTP server with the real operation pipeline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessPolicy } from '../../../../src/auth/access.js';
import { SCOPES, type Principal } from '../../../../src/auth/principal.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createOperationPipeline } from '../../../../src/graphql/pipeline/operation-pipeline.js';
import { createOperationResolver } from '../../../../src/graphql/pipeline/persisted-operations.js';
import { createSchema } from '../../../../src/graphql/schema/schema.js';
import { createGraphQLSse, type GraphQLSse } from '../../../../src/graphql/sse/sse-server.js';
import { NO_RATE_LIMITS } from '../../../../src/rate-limits/rate-limits.js';
import { createMemoryResultLog } from '../../../../src/log/memory-result-log.js';
import { createSilentLogger } from '../../../../src/base/logger.js';
import { createTestStarter } from '../../../../src/results/test-starter.js';
import { HS256_ENV } from '../../../support/tokens.js';

const principal: Principal = { subject: 'alice', clientId: null, scopes: new Set([SCOPES.read, SCOPES.write]), expiresAt: Date.now() + 3_600_000, issuer: 'https://issuer.example' };
let server: Server;
let sse: GraphQLSse;
let url: string;

beforeAll(async () => {
  const config = loadConfig({ ...HS256_ENV, KAFKA_BROKERS: '127.0.0.1:9092' });
  const logger = createSilentLogger();
  const log = createMemoryResultLog(config.resultLog);
  // Nothing here starts a test: a start request reaching the publisher is a failure of the test.
  const publisher = { start() {}, publish: () => Promise.reject(new Error('no start requests in this test')), dispose: async () => {} };
  const access = createAccessPolicy({ adminScope: config.auth.adminScope });
  const pipeline = createOperationPipeline({
    schema: createSchema(),
    deps: { log, starter: createTestStarter({ log, publisher, logger, maxInputBytes: config.resultLog.maxInputBytes }), subscriptionQueueLimit: 100, access },
    limits: config.graphql,
    shapeLimits: config.graphqlShape,
    introspection: true,
    resolveOperation: createOperationResolver(config.persistedOperations),
    debugErrors: false,
    logger,
  });
  sse = createGraphQLSse({ pipeline, logger, rateLimits: NO_RATE_LIMITS, maxStreamsPerPrincipal: 5, maxBufferedBytes: 64 * 1024, drainTimeoutMs: 30_000 });
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

const ask = () => fetch(url, { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });

describe('the SSE binding at shutdown', () => {
  it('serves a stream before it is disposed, and refuses one after with 503 SHUTTING_DOWN', async () => {
    const before = await ask();
    expect(before.status).toBe(200);
    expect(await before.text()).toContain('"__typename":"Query"');

    await sse.dispose();
    const after = await ask();
    expect(after.status).toBe(503);
    expect(after.headers.get('retry-after')).toBe('1');
    expect(await after.json()).toEqual({ errors: [{ message: expect.stringMatching(/shutting down/), extensions: { code: 'SHUTTING_DOWN' } }] });
  });
});
