/**
 * The bindings that stream over one HTTP response (graphql-sse, the multipart subscription
 * protocol) at shutdown: disposing one cuts its open streams and refuses new ones with 503
 * SHUTTING_DOWN and `Retry-After`, rather than opening a stream only for the closing server to cut
 * it. Each binding runs on a real HTTP server with the real operation pipeline.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Principal } from '../../../src/auth/principal.js';
import { createWriteCoalescer } from '../../../src/graphql/fanout/write-coalescer.js';
import { createGraphQLMultipart } from '../../../src/graphql/multipart/multipart-server.js';
import { createGraphQLSse } from '../../../src/graphql/sse/sse-server.js';
import { createTestPipeline } from '../../support/pipeline.js';
import { testPrincipal } from '../../support/principal.js';

const principal = testPrincipal([SCOPES.read, SCOPES.write]);

/** What both bindings share. */
interface Binding {
  handle(req: IncomingMessage & { body?: unknown }, res: ServerResponse, principal: Principal): Promise<void>;
  readonly streams: number;
  dispose(): Promise<void>;
}

const common = () => {
  const { pipeline, logger } = createTestPipeline();
  return {
    pipeline,
    logger,
    maxStreamsPerPrincipal: 5,
    maxBufferedBytes: 64 * 1024,
    drainTimeoutMs: 30_000,
    coalescer: createWriteCoalescer({ maxDelayMs: 0 }),
    delivery: { store: 'memory', durable: 'none' } as const,
  };
};

const bindings = [
  { name: 'graphql-sse', accept: 'text/event-stream', create: (): Binding => createGraphQLSse(common()) },
  { name: 'multipart', accept: 'multipart/mixed;subscriptionSpec=1.0', create: (): Binding => createGraphQLMultipart(common()) },
];

describe.each(bindings)('the $name binding at shutdown', ({ accept, create }) => {
  let server: Server;
  let binding: Binding;
  let url: string;

  beforeAll(async () => {
    binding = create();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => void binding.handle(Object.assign(req, { body: body === '' ? undefined : (JSON.parse(body) as unknown) }), res, principal));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const ask = (query: string, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers: { accept, 'content-type': 'application/json' }, body: JSON.stringify({ query }), ...(signal ? { signal } : {}) });

  it('serves before it is disposed; then cuts what is open, and refuses a new stream with 503 SHUTTING_DOWN and Retry-After', async () => {
    const before = await ask('{ __typename }');
    expect(before.status).toBe(200);
    expect(await before.text()).toContain('"__typename":"Query"');

    const open = await ask('subscription { testChanges { kind } }');
    expect(open.status).toBe(200);
    const reading = open.text().then(
      () => 'ended',
      () => 'cut',
    );
    await expect.poll(() => binding.streams).toBe(1);

    await binding.dispose();
    expect(await reading).toBe('cut');
    const after = await ask('subscription { testChanges { kind } }');
    expect(after.status).toBe(503);
    // With its reason phrase, which graphql-sse's client shows ("Server responded with 503: Service Unavailable").
    expect(after.statusText).toBe('Service Unavailable');
    expect(after.headers.get('retry-after')).toBe('1');
    const body = (await after.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ message: expect.stringMatching(/shutting down/), extensions: { code: 'SHUTTING_DOWN' } });
  });
});
