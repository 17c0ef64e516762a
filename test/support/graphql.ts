/**
 * GraphQL clients for tests: plain HTTP POSTs, a real graphql-ws client, graphql-sse's client,
 * Apollo Client's HttpLink (multipart HTTP subscriptions) and a raw event-stream reader.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, ServerError } from '@apollo/client';
import { parse } from 'graphql';
import { createClient as createGraphQLSseClient, type Client as SseClient } from 'graphql-sse';
import { createClient, type Client, type FormattedExecutionResult as ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { defaultToken } from './tokens.js';

/** A GraphQL response body with the HTTP status. */
export interface HttpGraphQLResponse<T = Record<string, any>> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { data?: T | null; errors?: Array<{ message: string; extensions?: Record<string, any>; path?: unknown[] }> };
}

/**
 * Throws unless every error carries a string `extensions.code`: the service's promise to clients
 * (docs/api.md), checked on every answer these helpers read, over every transport.
 */
export function expectCoded(errors: unknown, where: string): void {
  if (!Array.isArray(errors)) return;
  const uncoded = errors.filter((error: { extensions?: { code?: unknown } } | null) => typeof error?.extensions?.code !== 'string');
  if (uncoded.length > 0) throw new UncodedErrors(`${where} answered an error without extensions.code: ${JSON.stringify(uncoded)}`);
}

/** What {@link expectCoded} throws: a broken promise of the service, never an answer to compare. */
export class UncodedErrors extends Error {}

/**
 * An operation's request parameters besides `variables`: `query`, or a document id
 * (`documentId`, `extensions.persistedQuery`) for persisted operations.
 */
export type OperationRequest = { query?: string; documentId?: string; operationName?: string; extensions?: Record<string, unknown> };

/**
 * POSTs one operation to `${url}/graphql` with the default test token (or `options.token`; null
 * sends none). `request` is the query text, or the request's fields (a document id, extensions).
 */
export async function postGraphQL<T = Record<string, any>>(
  url: string,
  request: string | OperationRequest,
  variables?: Record<string, unknown>,
  options: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<HttpGraphQLResponse<T>> {
  const token = options.token === undefined ? await defaultToken() : options.token;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers },
    body: JSON.stringify({ ...(typeof request === 'string' ? { query: request } : request), variables }),
  });
  const body = (await response.json()) as HttpGraphQLResponse<T>['body'];
  expectCoded(body.errors, 'HTTP');
  return { status: response.status, headers: response.headers, body };
}

/**
 * GETs one operation from `${url}/graphql?…` with the default test token; objects (variables,
 * extensions) are sent as JSON. It carries a preflight-forcing header, as CSRF prevention asks.
 */
export async function getGraphQL<T = Record<string, any>>(
  url: string,
  params: OperationRequest & { variables?: Record<string, unknown> },
): Promise<HttpGraphQLResponse<T>> {
  const search = new URLSearchParams(
    Object.entries(params).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]) as Array<[string, string]>,
  );
  const response = await fetch(`${url}/graphql?${search.toString()}`, {
    headers: { authorization: `Bearer ${await defaultToken()}`, 'graphql-require-preflight': '1' },
  });
  const body = (await response.json()) as HttpGraphQLResponse<T>['body'];
  expectCoded(body.errors, 'HTTP');
  return { status: response.status, headers: response.headers, body };
}

/**
 * A graphql-ws client for `${url}/graphql` (http:// becomes ws://). It authenticates with the
 * default test token unless `connectionParams` says otherwise (a function is asked on every connect).
 * `onConnected` gets the socket once acknowledged, to send messages the client API has no call for.
 */
export function createWsClient(
  url: string,
  options: {
    connectionParams?: Record<string, unknown> | (() => Record<string, unknown> | Promise<Record<string, unknown>>);
    onClose?: (event: { code: number; reason: string }) => void;
    onConnected?: (socket: WebSocket) => void;
  } = {},
): Client {
  const { connectionParams } = options;
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: async () =>
      (typeof connectionParams === 'function' ? connectionParams() : connectionParams) ?? { authorization: `Bearer ${await defaultToken()}` },
    on: {
      connected: (socket) => options.onConnected?.(socket as WebSocket),
      closed: (event) => {
        const e = event as { code: number; reason: string };
        options.onClose?.({ code: e.code, reason: String(e.reason) });
      },
    },
  });
}

/** Everything one subscription received, and how it ended. */
export interface Collected<T> {
  // Results as the client got them (errors already formatted by the server).
  readonly results: Array<ExecutionResult<T, unknown>>;
  /** Resolves when the server completes the operation; rejects on an error message or close. */
  readonly done: Promise<void>;
  /** Resolves once `n` results have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  unsubscribe(): void;
}

/** What `collect` needs of a client: graphql-ws's and graphql-sse's both subscribe this way. */
export interface Subscriber {
  subscribe<T>(
    payload: { query: string; variables?: Record<string, unknown> } & OperationRequest,
    sink: { next: (value: ExecutionResult<T, unknown>) => void; error: (error: unknown) => void; complete: () => void },
  ): () => void;
}

/**
 * Subscribes and collects every result. `request` is the query text, or the subscribe payload's
 * fields (graphql-ws needs `query` to be a string: `""` when the document is named by id).
 */
export function collect<T = Record<string, any>>(client: Subscriber, request: string | OperationRequest, variables?: Record<string, unknown>): Collected<T> {
  const results: Array<ExecutionResult<T, unknown>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let unsubscribe = () => {};
  const done = new Promise<void>((resolve, reject) => {
    unsubscribe = client.subscribe<T>(
      { ...(typeof request === 'string' ? { query: request } : { query: '', ...request }), ...(variables ? { variables } : {}) },
      {
        next: (value) => {
          try {
            expectCoded(value.errors, 'A subscription');
          } catch (error) {
            reject(error);
          }
          results.push(value);
          for (const w of waiters.filter((x) => results.length >= x.n)) w.resolve();
        },
        error: reject,
        complete: resolve,
      },
    );
  });
  done.catch(() => undefined);
  return {
    results,
    done,
    unsubscribe: () => unsubscribe(),
    waitFor(n, timeoutMs = 15_000) {
      if (results.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${n} results, got ${results.length}`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
  };
}

/** Polls `check` until it returns a truthy value or the time runs out. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A GraphQL error as a client receives it. */
export type ClientErrors = Array<{ message: string; extensions?: Record<string, unknown> }>;

/** Runs one operation on a fresh connection of `client`: the errors it ends with (none when it completes without). */
async function errorsOf(
  client: Subscriber & { dispose(): unknown },
  request: string | OperationRequest,
  variables?: Record<string, unknown>,
): Promise<ClientErrors> {
  const sub = collect(client, request, variables);
  const outcome = await sub.done.then(
    () => sub.results.flatMap((result) => (result as { errors?: ClientErrors }).errors ?? []),
    (errors: unknown) => errors,
  );
  await client.dispose();
  if (outcome instanceof UncodedErrors) throw outcome;
  expectCoded(outcome, 'An operation');
  return outcome as ClientErrors;
}

/** Runs one operation over graphql-ws on a fresh connection: the errors it ends with (none when it completes without). */
export async function wsErrors(url: string, request: string | OperationRequest, variables?: Record<string, unknown>): Promise<ClientErrors> {
  return errorsOf(createWsClient(url), request, variables);
}

/**
 * graphql-sse's own client (distinct connections mode) for `${url}/graphql`, with the default test
 * token unless `token` says otherwise; `headers` adds headers to every connect (e.g. `last-event-id`).
 */
export function createSseClient(url: string, options: { token?: string; headers?: () => Record<string, string> } = {}): SseClient {
  return createGraphQLSseClient({
    url: `${url}/graphql`,
    retryAttempts: 0,
    headers: async () => ({ authorization: `Bearer ${options.token ?? (await defaultToken())}`, ...options.headers?.() }),
  });
}

/**
 * Runs one operation over SSE with graphql-sse's client: the errors it ends with, from the error
 * events, or from the body of a refusal before the stream opened (with its HTTP status).
 */
export async function sseErrors(
  url: string,
  query: string | OperationRequest,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<ClientErrors & { status?: number }> {
  const client = createSseClient(url, token === undefined ? {} : { token });
  const sub = collect(client, query, variables);
  try {
    return await sub.done.then(
      () => sub.results.flatMap((result) => (result as { errors?: ClientErrors }).errors ?? []),
      async (error: unknown) => {
        const response = (error as { response?: Response }).response;
        if (response === undefined) throw error;
        const body = (await response.json()) as { errors: ClientErrors };
        expectCoded(body.errors, 'A refused SSE request');
        return Object.assign(body.errors, { status: response.status });
      },
    );
  } finally {
    client.dispose();
  }
}

/** One event of a raw event stream. */
export interface StreamEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: any;
}

/** A raw event stream read with `fetch` and a ReadableStream reader. */
export interface EventStream {
  readonly status: number;
  readonly headers: Headers;
  /** Events so far, parsed from their `id:`, `event:` and `data:` lines. */
  readonly events: StreamEvent[];
  /** Resolves when the server ends the stream, or it is closed. */
  readonly ended: Promise<void>;
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  /** Drops the connection (as a network failure or a closed tab would). */
  close(): void;
}

/** POSTs one operation to `${url}/graphql` with `Accept: text/event-stream` and reads the stream as it comes. */
export async function openEventStream(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  options: { token?: string | null; lastEventId?: string } = {},
): Promise<EventStream> {
  const token = options.token === undefined ? await defaultToken() : options.token;
  const abort = new AbortController();
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId }),
    },
    body: JSON.stringify({ query, variables }),
  });
  const events: StreamEvent[] = [];
  const ended = readEvents(response, events).catch(() => undefined);
  return {
    status: response.status,
    headers: response.headers,
    events,
    ended,
    waitFor: (n, timeoutMs = 15_000) => eventually(() => events.length >= n, timeoutMs, `${n} events, got ${events.length}`).then(() => undefined),
    close: () => abort.abort(),
  };
}

/** Parses the body of `response` into `events`, event by event, until it ends. */
async function readEvents(response: Response, events: StreamEvent[]): Promise<void> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (let chunk = await reader.read(); chunk.done !== true; chunk = await reader.read()) {
    buffer += chunk.value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const fields = new Map<string, string>();
      for (const line of buffer.slice(0, end).split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      buffer = buffer.slice(end + 2);
      if (fields.has('event')) {
        const data = fields.get('data');
        events.push({ id: fields.get('id'), event: fields.get('event') as string, data: data === undefined || data === '' ? null : JSON.parse(data) });
      }
    }
  }
}

/** A subscription transport, for suites that run the same subscriptions over each. */
export interface SubscriptionTransport {
  readonly name: string;
  /** A client of the default test token. */
  client(url: string): Subscriber & { dispose(): unknown };
  /** Runs one operation on a fresh client: the errors it ends with. */
  errors(url: string, request: string | OperationRequest, variables?: Record<string, unknown>): Promise<ClientErrors>;
}

/**
 * Apollo Client's `HttpLink` on its own (no cache between it and the results): subscriptions over
 * Apollo's multipart HTTP protocol, exactly as Apollo Client sends and reads them. A refusal
 * before the response opens reaches `error` as its GraphQL errors, as graphql-ws's client gives them.
 */
export function createMultipartClient(url: string, options: { token?: string } = {}): Subscriber & { dispose(): void } {
  const token = options.token === undefined ? defaultToken() : Promise.resolve(options.token);
  const link = new HttpLink({
    uri: `${url}/graphql`,
    fetch: async (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${await token}` } }),
  });
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return {
    subscribe(payload, sink) {
      const request = { query: parse(payload.query), variables: payload.variables ?? {}, extensions: payload.extensions ?? {} };
      const subscription = ApolloLink.execute(link, request, { client }).subscribe({
        next: (result) => sink.next(result as never),
        error: (error: unknown) => sink.error(ServerError.is(error) ? refusalErrors(error.bodyText) : error),
        complete: () => sink.complete(),
      });
      return () => subscription.unsubscribe();
    },
    dispose: () => client.stop(),
  };
}

/** The GraphQL errors of a refusal's body, or the body itself when it holds none. */
function refusalErrors(bodyText: string): unknown {
  try {
    return (JSON.parse(bodyText) as { errors?: unknown }).errors ?? bodyText;
  } catch {
    return bodyText;
  }
}

/** Every transport subscriptions are served over. */
export const subscriptionTransports: readonly SubscriptionTransport[] = [
  { name: 'graphql-ws', client: (url) => createWsClient(url), errors: wsErrors },
  { name: 'graphql-sse', client: (url) => createSseClient(url), errors: sseErrors },
  {
    name: 'multipart HTTP (Apollo Client)',
    client: (url) => createMultipartClient(url),
    errors: (url, request, variables) => errorsOf(createMultipartClient(url), request, variables),
  },
];
