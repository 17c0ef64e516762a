/**
 * The WebSocket transport serializes a result pushed to many subscriptions once and splices its
 * text into each `next` frame. What a client reads must not show it: every frame is exactly what
 * graphql-ws writes itself (`JSON.stringify` of the message, compact, keys in its order), each
 * subscription gets its own id, and single results and pongs go out as before. The service runs
 * without a broker (the pipeline's harness): results reach it through the consumer's handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { eventually } from '../support/graphql.js';
import { openRawSocket } from '../support/raw-socket.js';
import { startPipelineService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';
import { incoming } from '../log/storage-contract.js';

const store = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 1000 });
let svc: Awaited<ReturnType<typeof startPipelineService>>;

beforeAll(async () => {
  svc = await startPipelineService({ log: store });
});

afterAll(async () => {
  await svc?.stop();
  await store.dispose();
});

/** A raw graphql-ws connection, acknowledged, keeping every frame it receives as text. */
const connect = async () => openRawSocket(svc.url, await defaultToken(), { keepFrames: true });

const FOLLOW = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence status payload } }';

describe('WebSocket next frames', () => {
  it('are what graphql-ws writes, one id per subscription, for results shared by many subscriptions', async () => {
    const id = `frames-${Date.now()}`;
    await store.create({ correlationId: id, input: null, owner: 'tester' });
    const clients = await Promise.all([connect(), connect()]);
    // Two subscriptions on the first socket and one on the second: three frames per message.
    const subscriptions: Array<[number, string]> = [
      [0, 'a'],
      [0, 'b'],
      [1, 'c'],
    ];
    for (const [i, sub] of subscriptions) clients[i]?.ws.send(JSON.stringify({ id: sub, type: 'subscribe', payload: { query: FOLLOW, variables: { id } } }));
    await eventually(() => store.followers(id) === 3, 5000, 'three followers');
    await svc.memoryBroker.deliver([
      incoming(id, { sequence: 1, status: 'RUNNING', payload: { text: 'quote " and \\ and \u00e9', n: 1.5 } }),
      incoming(id, { sequence: 2, status: 'COMPLETED', payload: 'done' }),
    ]);
    const nexts = () => clients.flatMap((c) => c.frames.filter((f) => f.includes('"type":"next"')));
    await eventually(() => nexts().length === 6, 5000, 'six next frames');
    for (const frame of nexts()) {
      const message = JSON.parse(frame) as { id: string; type: string; payload: { data: { testMessages: { sequence: number } } } };
      // Byte for byte the compact serialization graphql-ws itself produces: id, type, payload.
      expect(frame).toBe(JSON.stringify({ id: message.id, type: 'next', payload: message.payload }));
      expect(frame).not.toContain('\\u0000');
    }
    for (const [i, sub] of subscriptions) {
      const mine = clients[i]?.frames.filter((f) => f.startsWith(`{"id":"${sub}","type":"next"`)).map((f) => JSON.parse(f).payload.data.testMessages);
      expect(mine).toEqual([
        { sequence: 1, status: 'RUNNING', payload: { text: 'quote " and \\ and \u00e9', n: 1.5 } },
        { sequence: 2, status: 'COMPLETED', payload: 'done' },
      ]);
    }
    // A pong after the spliced frames is untouched.
    clients[0]?.ws.send(JSON.stringify({ type: 'ping' }));
    await eventually(() => clients[0]?.frames.includes('{"type":"pong"}'), 5000, 'the pong');
    for (const c of clients) c.ws.close();
  });

  it("a query's single result is framed exactly too", async () => {
    const { ws, frames } = await connect();
    ws.send(JSON.stringify({ id: 'ok', type: 'subscribe', payload: { query: '{ __typename }' } }));
    await eventually(() => frames.some((f) => f.startsWith('{"id":"ok","type":"next"')), 5000, 'the query answer');
    expect(frames).toContain('{"id":"ok","type":"next","payload":{"data":{"__typename":"Query"}}}');
    ws.close();
  });
});
