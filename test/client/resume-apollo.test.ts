/**
 * Exact resume inside Apollo Client 4: the library's `createResumeLink` in front of what carries the
 * subscription, following a test through the TCP proxy while it drops the connection mid-stream
 * twice: every message once, in order. Over multipart HTTP (a plain `HttpLink` behind Apollo's
 * `RetryLink`, which subscribes again after the drop) and over graphql-ws (`GraphQLWsLink`, whose
 * client reconnects on its own). The same links without the resume link start over after a drop
 * (each message again), which is what it is for.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { RetryLink } from '@apollo/client/link/retry';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResumeLink } from '@result-collection-service/client/apollo';
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
let token: string;
beforeAll(async () => {
  svc = await startPipelineService({ log });
  proxy = await startTcpProxy(svc.url);
  token = await defaultToken();
});
afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

/** What carries the subscription: the link at the end of the chain, and how to let it go. */
interface Carrier {
  readonly links: ApolloLink[];
  dispose(): unknown;
}

const carriers = {
  /** Apollo Client's default transport for subscriptions: multipart HTTP, retried after a drop. */
  multipart: (): Carrier => ({
    links: [
      new RetryLink({ delay: { initial: 100, jitter: false }, attempts: { max: 10 } }),
      new HttpLink({ uri: `${proxy.url}/graphql`, headers: { authorization: `Bearer ${token}` } }),
    ],
    dispose: () => undefined,
  }),
  /** GraphQLWsLink over a graphql-ws client that reconnects after a dropped connection. */
  ws: (): Carrier => {
    const client = createClient({
      url: `${proxy.url.replace(/^http/, 'ws')}/graphql`,
      connectionParams: { authorization: `Bearer ${token}` },
      shouldRetry: () => true,
    });
    return { links: [new GraphQLWsLink(client)], dispose: () => client.dispose() };
  },
} as const;

/** Follows `id` with Apollo Client over `links` and cuts the connection after the 2nd and the 4th message, adding the rest meanwhile. */
async function followWithDrops(links: ApolloLink[], id: string): Promise<Array<number | null>> {
  const client = new ApolloClient({ link: ApolloLink.from(links), cache: new InMemoryCache() });
  const sequences: Array<number | null> = [];
  const subscription = client.subscribe<{ testMessages: { sequence: number | null } }>({ query: FOLLOW, variables: { id } }).subscribe({
    next: (result) => {
      if (result.data) sequences.push(result.data.testMessages.sequence);
    },
  });
  try {
    await eventually(() => sequences.length >= 2, 20_000, 'the stored messages');
    proxy.cut();
    await log.append([incoming(id, { sequence: 3 }), incoming(id, { sequence: 4 })]);
    await eventually(() => sequences.includes(4), 30_000, 'the 4th message');
    proxy.cut();
    await log.append([incoming(id, { sequence: 5 }), incoming(id, { sequence: 6, final: true })]);
    await eventually(() => sequences.includes(6), 30_000, 'the final message');
    return sequences;
  } finally {
    subscription.unsubscribe();
    client.stop();
  }
}

/** Two reconnects after the clients' own backoff, on a machine that may be loaded. */
const RECONNECTS_MS = 90_000;

describe.each(['multipart', 'ws'] as const)('Apollo Client over %s, through dropped connections', (transport) => {
  it(
    'with createResumeLink: every message once, in order',
    async () => {
      const id = await storedTest(log, `apollo-resume-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
      const carrier = carriers[transport]();
      try {
        expect(await followWithDrops([createResumeLink(), ...carrier.links], id)).toEqual([1, 2, 3, 4, 5, 6]);
      } finally {
        await carrier.dispose();
      }
    },
    RECONNECTS_MS,
  );

  it(
    'without it: the subscription starts again from the first message after a drop',
    async () => {
      const id = await storedTest(log, `apollo-plain-${transport}`, [{ sequence: 1 }, { sequence: 2 }]);
      const carrier = carriers[transport]();
      try {
        expect((await followWithDrops(carrier.links, id)).slice(0, 4)).toEqual([1, 2, 1, 2]);
      } finally {
        await carrier.dispose();
      }
    },
    RECONNECTS_MS,
  );
});
