/**
 * Apollo's multipart HTTP subscription protocol on /graphql, as Apollo Client 4 speaks it on its
 * defaults (a plain `HttpLink`, no WebSocket link): a test followed to its final message, stored
 * and live; the lifecycle's rules (a refusal before the response opens, in the type asked for;
 * the per-principal stream cap shared with SSE); endings as GraphQL errors inside the payload (the
 * token's expiry, an unknown cursor); heartbeats; and one dropped connection, resumed with the
 * last cursor. The service runs without a broker (the pipeline's harness).
 */
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incoming, storedTest } from '../log/storage-contract.js';
import { eventually, openEventStream } from '../support/graphql.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { defaultToken, mintToken } from '../support/tokens.js';

let svc: TestService;
let proxy: TcpProxy;

beforeAll(async () => {
  svc = await startPipelineService({ env: { SSE_MAX_STREAMS: '2' } });
  proxy = await startTcpProxy(svc.url);
});

afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

const FOLLOW = gql`
  subscription Follow($id: ID!, $after: String) {
    testMessages(correlationId: $id, after: $after) {
      cursor
      sequence
      payload
      final
    }
  }
`;

interface Message {
  readonly cursor: string;
  readonly sequence: number;
  readonly payload: unknown;
  readonly final: boolean;
}

/** Apollo Client as its getting-started page sets it up, with a bearer token. */
function apolloClient(token: string, url = svc.url): ApolloClient {
  return new ApolloClient({ link: new HttpLink({ uri: `${url}/graphql`, headers: { authorization: `Bearer ${token}` } }), cache: new InMemoryCache() });
}

/** Everything one subscription of Apollo Client received, and how it ended. */
function follow(client: ApolloClient, variables: Record<string, unknown>) {
  const messages: Message[] = [];
  const errors: unknown[] = [];
  let completed = false;
  const subscription = client.subscribe<{ testMessages: Message }>({ query: FOLLOW, variables }).subscribe({
    next: (result) => {
      if (result.error !== undefined) errors.push(result.error);
      if (result.data) messages.push(result.data.testMessages);
    },
    error: (error: unknown) => void errors.push(error),
    complete: () => void (completed = true),
  });
  return {
    messages,
    errors,
    get completed() {
      return completed;
    },
    unsubscribe: () => subscription.unsubscribe(),
  };
}

/** The codes of the GraphQL errors Apollo Client reported. */
const codesOf = (errors: unknown[]) =>
  errors.flatMap((error) => (CombinedGraphQLErrors.is(error) ? error.errors.map((e) => e.extensions?.code) : [`not a GraphQL error: ${String(error)}`]));

describe('Apollo Client 4 on its defaults (HttpLink): subscriptions over multipart HTTP', () => {
  it('follows a test from its stored messages through live ones to the final message, then completes', async () => {
    const id = await storedTest(svc.log, 'multipart', [{ sequence: 1, payload: 'stored' }], 'tester');
    const sub = follow(apolloClient(await defaultToken()), { id });
    await eventually(() => sub.messages.length >= 1, 10_000, 'the stored message');
    await svc.log.append([incoming(id, { sequence: 2, payload: 'live' })]);
    await svc.log.append([incoming(id, { sequence: 3, payload: 'last', final: true })]);
    await eventually(() => sub.completed, 10_000, 'the end of the stream');
    expect(sub.errors).toEqual([]);
    expect(sub.messages.map((m) => [m.sequence, m.payload, m.final])).toEqual([
      [1, 'stored', false],
      [2, 'live', false],
      [3, 'last', true],
    ]);
  });

  it('answers with the multipart content type Apollo Client reads, ends each part with the boundary at once, and sends a heartbeat part every five seconds', async () => {
    const id = await storedTest(svc.log, 'multipart', [{ sequence: 1, payload: 'stored' }], 'tester');
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await defaultToken()}`,
        'content-type': 'application/json',
        accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json',
      },
      body: JSON.stringify({ query: FOLLOW.loc!.source.body, variables: { id } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec=1.0');
    const reader = response.body!.getReader();
    let text = '';
    const readUntil = (what: string) =>
      eventually(
        async () => {
          const { value } = await reader.read();
          text += new TextDecoder().decode(value);
          return text.includes(what);
        },
        15_000,
        what,
      );
    await readUntil('"payload"');
    // A client ends a part where the next boundary starts: without one, the push would wait for the next.
    expect(text).toBe(
      `\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"payload":{"data":{"testMessages":${text.slice(text.indexOf('{"cursor"'), text.lastIndexOf('}}}') + 1)}}}\r\n--graphql`,
    );
    await readUntil('\r\n\r\n{}\r\n--graphql');
    await reader.cancel();
  });

  it('refuses an invalid document before the response opens, in the type Apollo Client asked for, with its code', async () => {
    const sub = follow(apolloClient(await defaultToken()), {});
    await eventually(() => sub.errors.length > 0, 10_000, 'the refusal');
    expect(codesOf(sub.errors)).toEqual(['BAD_USER_INPUT']);
    expect(sub.messages).toEqual([]);
  });

  it('ends a stream at the token expiry with UNAUTHENTICATED inside the payload, not as a transport failure', async () => {
    const id = await storedTest(svc.log, 'multipart', [{ sequence: 1, payload: 'stored' }], 'tester');
    const sub = follow(apolloClient(await mintToken({}, { expiresInSeconds: 2 })), { id });
    await eventually(() => sub.errors.length > 0, 10_000, 'the expiry');
    expect(codesOf(sub.errors)).toEqual(['UNAUTHENTICATED']);
    expect(sub.messages.map((m) => m.sequence)).toEqual([1]);
  });

  it('answers a cursor the test does not hold with BAD_USER_INPUT inside the payload', async () => {
    const id = await storedTest(svc.log, 'multipart', [], 'tester');
    const sub = follow(apolloClient(await defaultToken()), { id, after: 'not-a-cursor' });
    await eventually(() => sub.errors.length > 0, 10_000, 'the refusal');
    expect(codesOf(sub.errors)).toEqual(['BAD_USER_INPUT']);
  });

  it('counts multipart streams against the cap SSE streams count against (SSE_MAX_STREAMS)', async () => {
    const id = await storedTest(svc.log, 'multipart', [], 'tester');
    const sse = await openEventStream(svc.url, FOLLOW.loc!.source.body, { id });
    const held = follow(apolloClient(await defaultToken()), { id });
    try {
      const refused = follow(apolloClient(await defaultToken()), { id });
      await eventually(() => refused.errors.length > 0, 10_000, 'the refusal');
      expect(codesOf(refused.errors)).toEqual(['TOO_MANY_SUBSCRIPTIONS']);
      expect(held.errors).toEqual([]);
    } finally {
      held.unsubscribe();
      sse.close();
    }
  });

  it('resumes after a dropped connection with the last cursor it received: every message once, in order', async () => {
    const id = await storedTest(svc.log, 'multipart', [{ sequence: 1, payload: 'one' }], 'tester');
    const client = apolloClient(await defaultToken(), proxy.url);
    const first = follow(client, { id });
    await eventually(() => first.messages.length >= 1, 10_000, 'the first message');
    proxy.cut();
    await eventually(() => first.errors.length > 0 || first.completed, 10_000, 'the drop');
    await svc.log.append([incoming(id, { sequence: 2, payload: 'two' })]);
    const second = follow(client, { id, after: first.messages.at(-1)!.cursor });
    await eventually(() => second.messages.length >= 1, 10_000, 'the message sent during the drop');
    await svc.log.append([incoming(id, { sequence: 3, payload: 'three', final: true })]);
    await eventually(() => second.completed, 10_000, 'the end of the stream');
    expect([...first.messages, ...second.messages].map((m) => m.sequence)).toEqual([1, 2, 3]);
    expect(second.errors).toEqual([]);
  });

  it('is chosen over SSE by the order and q-values of Accept, and never for a query', async () => {
    const id = await storedTest(svc.log, 'multipart', [], 'tester');
    const spec = 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0';
    const typeFor = async (accept: string, query = FOLLOW.loc!.source.body) => {
      const abort = new AbortController();
      const response = await fetch(`${svc.url}/graphql`, {
        method: 'POST',
        signal: abort.signal,
        headers: { authorization: `Bearer ${await defaultToken()}`, 'content-type': 'application/json', accept },
        body: JSON.stringify({ query, variables: { id } }),
      });
      abort.abort();
      return response.headers.get('content-type')?.split(';')[0];
    };
    expect(await typeFor(`${spec}, text/event-stream`)).toBe('multipart/mixed');
    expect(await typeFor(`text/event-stream, ${spec}`)).toBe('text/event-stream');
    expect(await typeFor(`text/event-stream;q=0.5, ${spec}`)).toBe('multipart/mixed');
    expect(await typeFor(`${spec};q=0, text/event-stream`)).toBe('text/event-stream');
    // urql's fetch path lists multipart/mixed without the subscription spec: its SSE is served.
    expect(await typeFor('text/event-stream, multipart/mixed')).toBe('text/event-stream');
    expect(await typeFor(`${spec},application/json;q=0.9`, '{ __typename }')).toBe('application/json');
  });
});
