/**
 * Exact resume inside urql: its `subscriptionExchange` over a graphql-ws client (reconnecting on
 * its own, as the package README sets it up) or graphql-sse's client (its defaults), wrapped in the
 * library's `withResume`, following a test through the TCP proxy while it drops the connection
 * mid-stream twice: every message once, in order. The same client without `withResume` is shown to start over after a drop (each message
 * again), which is what the wrapper is for.
 */
import { Client, gql, subscriptionExchange } from '@urql/core';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withResume, type SubscribingClient } from '@result-collection-service/client';
import { createMemoryResultLog } from '../../src/log/memory-result-log.js';
import { incoming, storedTest } from '../log/storage-contract.js';
import { eventually } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { defaultToken } from '../support/tokens.js';

const FOLLOW = gql`
  subscription Follow($id: ID!, $after: String) {
    testMessages(correlationId: $id, after: $after) {
      id
      cursor
      sequence
      final
    }
  }
`;

const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 10_000, maxMessagesPerTest: 10_000 });
let svc: TestService;
let proxy: TcpProxy;
beforeAll(async () => {
  svc = await startPipelineService({ log });
  proxy = await startTcpProxy(svc.url);
});
afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

/** urql on its defaults but for the subscription exchange, forwarding to `ws` (graphql-ws's or graphql-sse's client) as urql's docs show. */
function urqlOver(ws: SubscribingClient & { dispose(): unknown }): Client {
  return new Client({
    url: `${proxy.url}/graphql`,
    exchanges: [
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}

/** Follows `id` with urql and cuts the connection after the 2nd and the 4th message, adding the rest meanwhile. */
async function followWithDrops(ws: SubscribingClient & { dispose(): unknown }, id: string): Promise<Array<number | null>> {
  const sequences: Array<number | null> = [];
  const subscription = urqlOver(ws)
    .subscription(FOLLOW, { id })
    .subscribe((result) => {
      const message = (result.data as { testMessages?: { sequence: number | null } } | undefined)?.testMessages;
      // urql marks a subscription's end with one more result, `hasNext: false`, repeating the last data.
      if (message !== undefined && result.hasNext) sequences.push(message.sequence);
    });
  try {
    await eventually(() => sequences.length >= 2, 20_000, 'the stored messages');
    proxy.cut();
    await log.append([incoming(id, { sequence: 3 }), incoming(id, { sequence: 4 })]);
    await eventually(() => sequences.includes(4), 20_000, 'the 4th message');
    proxy.cut();
    await log.append([incoming(id, { sequence: 5 }), incoming(id, { sequence: 6, final: true })]);
    await eventually(() => sequences.includes(6), 20_000, 'the final message');
    return sequences;
  } finally {
    subscription.unsubscribe();
    await ws.dispose();
  }
}

/**
 * A graphql-ws client that reconnects after a dropped connection: its default `shouldRetry` retries
 * only after a close event, and a dropped connection ends with an error event first (Node's and
 * browsers' WebSocket alike), so the subscription would fail instead.
 */
const wsClient = () =>
  createClient({
    url: `${proxy.url.replace(/^http/, 'ws')}/graphql`,
    connectionParams: async () => ({ authorization: `Bearer ${await defaultToken()}` }),
    shouldRetry: () => true,
  });

/** graphql-sse's client (distinct connections), on its defaults: it reconnects after a dropped stream. */
const sseClient = () => createSseClient({ url: `${proxy.url}/graphql`, headers: async () => ({ authorization: `Bearer ${await defaultToken()}` }) });

const clients = { ws: wsClient, sse: sseClient } as const;
/** Two reconnects after the clients' own randomised backoff (up to 4 s each), on a machine that may be loaded. */
const RECONNECTS_MS = 90_000;

describe.each(['ws', 'sse'] as const)('urql over %s, through dropped connections', (transport) => {
  it(
    'with withResume: every message once, in order',
    async () => {
      const id = await storedTest(log, `urql-resume-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
      expect(await followWithDrops(withResume(clients[transport]()), id)).toEqual([1, 2, 3, 4, 5, 6]);
    },
    RECONNECTS_MS,
  );

  it(
    'without it: the client subscribes again from the start after a drop, handing messages again',
    async () => {
      const id = await storedTest(log, `urql-plain-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
      const sequences = await followWithDrops(clients[transport](), id);
      expect(sequences.slice(0, 4)).toEqual([1, 2, 1, 2]);
    },
    RECONNECTS_MS,
  );
});
