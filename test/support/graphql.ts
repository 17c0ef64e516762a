/** GraphQL clients for tests: plain HTTP POSTs and a real graphql-ws client. */
import { createClient, type Client, type FormattedExecutionResult as ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { defaultToken } from './tokens.js';

/** A GraphQL response body with the HTTP status. */
export interface HttpGraphQLResponse<T = Record<string, any>> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { data?: T | null; errors?: Array<{ message: string; extensions?: Record<string, any>; path?: unknown[] }> };
}

/** POSTs one operation to `${url}/graphql` with the default test token (or `options.token`; null sends none). */
export async function postGraphQL<T = Record<string, any>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  options: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<HttpGraphQLResponse<T>> {
  const token = options.token === undefined ? await defaultToken() : options.token;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as HttpGraphQLResponse<T>['body'] };
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
    connectionParams: async () => (typeof connectionParams === 'function' ? connectionParams() : connectionParams) ?? { authorization: `Bearer ${await defaultToken()}` },
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

/** Subscribes and collects every result. */
export function collect<T = Record<string, any>>(client: Client, query: string, variables?: Record<string, unknown>): Collected<T> {
  const results: Array<ExecutionResult<T, unknown>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let unsubscribe = () => {};
  const done = new Promise<void>((resolve, reject) => {
    unsubscribe = client.subscribe<T>(
      { query, ...(variables ? { variables } : {}) },
      {
        next: (value) => {
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
export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15_000, what = 'condition'): Promise<T> {
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

/** Runs one operation over graphql-ws on a fresh connection: the errors it ends with (none when it completes without). */
export async function wsErrors(url: string, query: string): Promise<ClientErrors> {
  const client = createWsClient(url);
  const sub = collect(client, query);
  const outcome = await sub.done.then(
    () => sub.results.flatMap((result) => (result as { errors?: ClientErrors }).errors ?? []),
    (errors: unknown) => errors,
  );
  await client.dispose();
  return outcome as ClientErrors;
}
