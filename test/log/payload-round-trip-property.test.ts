/**
 * Whatever result payload ingest accepts is served back as it was published: arbitrary JSON
 * (prototype names as keys, unicode, odd numbers, nesting within the shape limits) in a result
 * record, decoded by the consumer's own decoder and handed to the service's result handler as a
 * consumer hands it a batch, then read with `GET /tests/{id}`, `test { messages }` and a
 * `testMessages` event stream, on the memory and the Redis store. A payload past the limits is
 * refused by the decoder (counted and dead-lettered by the consumer), never stored.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeResult } from '../../src/ingest/decode-result.js';
import { openEventStream, postGraphQL } from '../support/graphql.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { authedFetch } from '../support/tokens.js';
import { storedTest } from './storage-contract.js';

const redisLogs = useRedisLogs('rcs-payload-property');
const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'), fc.string({ unit: 'grapheme', maxLength: 8 }));
const payload = fc.letrec((tie) => ({
  value: fc.oneof(
    { maxDepth: 4, withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const READ = `query($id: ID!) { test(correlationId: $id) { messages { edges { node { payload } } } } }`;
const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { payload final } }';

/** A record as the external system publishes it: the correlation id as key and header, the message as JSON. */
const record = (correlationId: string, message: Record<string, unknown>, offset: number) => ({
  topic: 'test-results',
  partition: 0,
  offset: String(offset),
  key: Buffer.from(correlationId),
  value: Buffer.from(JSON.stringify({ correlationId, ...message })),
  headers: Object.assign(Object.create(null) as Record<string, string>, { correlation_id: correlationId }),
});

/** JSON as the wire carries it: what a faithful read must give back, byte for byte. */
const wire = (value: unknown) => JSON.stringify(JSON.parse(JSON.stringify(value)));

const stores = [
  ['memory', () => ({})],
  ['redis', () => ({ log: redisLogs.createLog() })],
] as const;

describe.each(stores)('result payloads round-trip on the %s store', (_label, extra) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startPipelineService(extra());
  });
  afterAll(() => svc?.stop());

  it('serves back every payload ingest accepts, by GET, by query and over SSE', async () => {
    let offset = 0;
    await fc.assert(
      fc.asyncProperty(payload, async (sent) => {
        const id = await storedTest(svc.log, 'payload', [], 'tester');
        const decoded = decodeResult(
          record(id, { sequence: 1, payload: sent, final: true }, (offset += 1)),
          svc.config.kafka.maxResultBytes,
          svc.config.kafka.jsonShape,
        );
        expect(decoded.ok).toBe(true);
        if (!decoded.ok) return;
        const outcomes = await svc.memoryBroker!.deliver([decoded.message]);
        expect(outcomes).toHaveLength(1);
        const expected = wire(sent);

        const rest = (await (await authedFetch(`${svc.url}/tests/${id}`)).json()) as { messages: Array<{ payload: unknown }> };
        expect(rest.messages.map((m) => wire(m.payload))).toEqual([expected]);
        const graph = await postGraphQL<{ test: { messages: { edges: Array<{ node: { payload: unknown } }> } } }>(svc.url, READ, { id });
        expect(graph.body.data?.test.messages.edges.map((e) => wire(e.node.payload))).toEqual([expected]);
        const stream = await openEventStream(svc.url, FOLLOW, { id });
        await stream.ended;
        const pushed = stream.events.filter((e) => e.event === 'next').map((e) => wire(e.data.data.testMessages.payload));
        expect(pushed).toEqual([expected]);
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('refuses a payload deeper than the shape limits at the decoder, so it is never stored', () => {
    const deep = JSON.parse('['.repeat(svc.config.resultLog.jsonShape.maxDepth + 1) + ']'.repeat(svc.config.resultLog.jsonShape.maxDepth + 1)) as unknown;
    const decoded = decodeResult(record('deep', { payload: deep }, 0), svc.config.kafka.maxResultBytes, svc.config.kafka.jsonShape);
    expect(decoded).toMatchObject({ ok: false, reason: expect.stringMatching(/deep|depth|nest/i) });
  });
});
