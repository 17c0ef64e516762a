/**
 * A stored payload read back (`GET /tests/{id}`, a query over HTTP, a replay and a push over
 * graphql-ws) is the payload that arrived, on the memory and
 * the Redis store; on the memory store, which keeps the payload as its JSON text, no read parses
 * that text: it is copied into the response as it is (`src/domain/json-text.ts`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MemoryBrokerSide } from '../support/memory-broker-side.js';
import { incoming } from '../log/storage-contract.js';
import { collect, createWsClient, postGraphQL } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { authedFetch, mintToken } from '../support/tokens.js';

const redis = useRedisLogs('stored-payload-text');

/** A payload with what a serializer can get wrong: escapes, non-ASCII, nesting, numbers, a null, a key named like a prototype member. */
const PAYLOAD = {
  note: 'line\nbreak "quoted" \\ back\u2028slash ünïcödé 🚀',
  nested: { list: [1, -2.5, 1e21, null, true, { deep: ['x'.repeat(300)] }] },
  ['__proto__']: { own: 1 },
  empty: {},
};
const TEXT = JSON.stringify(PAYLOAD);
const MESSAGE = 'sequence payload';

describe.each(['memory', 'redis'] as const)('a stored payload, read back (%s store)', (store) => {
  let svc: TestService;
  let broker: MemoryBrokerSide;
  let token: string;
  beforeAll(async () => {
    svc = await startPipelineService(store === 'redis' ? { log: redis.createLog() } : {});
    broker = svc.memoryBroker as MemoryBrokerSide;
    token = await mintToken({ sub: 'root', scope: 'tests:read tests:write tests:admin' });
  }, 60_000);
  afterAll(() => svc?.stop());

  it('is the payload that arrived on every read path, and on the memory store its text is never parsed', async () => {
    const id = randomUUID();
    const payload = JSON.parse(TEXT) as unknown;
    await broker.deliver([incoming(id, { sequence: 1, payload }), { ...incoming(id, { sequence: 2 }), payload: null }]);
    const parses = vi.spyOn(JSON, 'parse');
    try {
      const rest = await authedFetch(`${svc.url}/tests/${id}`, { token });
      expect(rest.status).toBe(200);
      expect(rest.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const restText = await rest.text();
      expect(restText).toContain(`"payload":${TEXT}`);
      const body = JSON.parse(restText) as { messages: Array<{ payload: unknown }> };
      expect(body.messages.map((m) => m.payload)).toEqual([payload, null]);

      const query = await postGraphQL(
        svc.url,
        `query($id: ID!) { test(correlationId: $id) { messages { edges { node { ${MESSAGE} } } } } }`,
        { id },
        { token },
      );
      expect(query.body.errors).toBeUndefined();
      expect(query.body.data?.test.messages.edges.map((e: { node: { payload: unknown } }) => e.node.payload)).toEqual([payload, null]);

      const ws = createWsClient(svc.url, { connectionParams: { authorization: `Bearer ${token}` } });
      try {
        const pushes = collect<{ testMessages: { payload: unknown } }>(ws, `subscription($id: ID!) { testMessages(correlationId: $id) { ${MESSAGE} } }`, {
          id,
        });
        await pushes.waitFor(2);
        pushes.unsubscribe();
        expect(pushes.results.map((r) => r.data?.testMessages.payload)).toEqual([payload, null]);
      } finally {
        await ws.dispose();
      }
      // The service's own parses of the stored text, if any (the clients' parses of the responses are of whole bodies).
      const ofStoredText = parses.mock.calls.filter(([text]) => text === TEXT).length;
      if (store === 'memory') expect(ofStoredText).toBe(0);
    } finally {
      parses.mockRestore();
    }
  });
});
