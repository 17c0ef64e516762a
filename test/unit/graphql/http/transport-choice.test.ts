/**
 * The transport a request to `/graphql` is answered by, over real HTTP: a subscription is read by
 * the lifecycle's parse phase (its limits, and the document its plugins keep for the transport that
 * prepares it next: one parse per text), a document that never names `subscription` is not parsed.
 */
import express from 'express';
import { buildSchema } from 'graphql';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamingTransport } from '../../../../src/graphql/http/transport-choice.js';
import { createOperationLifecycle } from '../../../../src/graphql/pipeline/operation-lifecycle.js';

const lifecycle = createOperationLifecycle({
  schema: buildSchema('type Query { a: Int } type Subscription { a: Int }'),
  plugins: [],
  createContext: () => ({}),
  observerFailed: () => undefined,
});
/** The texts the parse phase was asked for. */
const parsed: string[] = [];
let server: ReturnType<express.Express['listen']>;
let url: string;

beforeAll(async () => {
  const app = express();
  app.use(express.json());
  const seen = { resolve: lifecycle.resolve, parse: (text: string) => (parsed.push(text), lifecycle.parse(text)) };
  app.post('/graphql', (req, res) => void res.json({ transport: streamingTransport(req, seen) ?? 'one response' }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function choice(accept: string, query: string): Promise<string> {
  parsed.length = 0;
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query }) });
  return ((await response.json()) as { transport: string }).transport;
}

const JSON_THEN_EVENTS = 'application/graphql-response+json, application/json;q=0.9, text/event-stream;q=0.8';
const MULTIPART = 'multipart/mixed;subscriptionSpec="1.0", application/json';

describe('the transport choice', () => {
  it("reads a subscription through the lifecycle's parse phase, once", async () => {
    expect(await choice(JSON_THEN_EVENTS, 'subscription { a }')).toBe('sse');
    expect(parsed).toEqual(['subscription { a }']);
    expect(await choice(MULTIPART, 'subscription S { a }')).toBe('multipart');
    expect(parsed).toEqual(['subscription S { a }']);
  });

  it('parses no document that does not name a subscription, and leaves one that does not parse to one response', async () => {
    expect(await choice(JSON_THEN_EVENTS, '{ a }')).toBe('one response');
    expect(parsed).toEqual([]);
    expect(await choice(JSON_THEN_EVENTS, 'subscription { a')).toBe('one response');
    expect(parsed).toEqual(['subscription { a']);
  });
});
