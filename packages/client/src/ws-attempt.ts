/**
 * One attempt over graphql-ws: a socket of its own (the token in `connection_init`), one
 * `subscribe`, and how it ended. graphql-ws's own retries are off: a retry would send the same
 * `subscribe` again, with the cursor of the first attempt, where `follow` resumes after the last
 * message taken. The library pings every third of the dead-stream bound and takes a socket that
 * answers nothing (no message, no pong) for the whole bound as dead: graphql-ws's `terminate()`.
 */
import { createClient } from 'graphql-ws/client';
import type { Attempt, AttemptEnd, AttemptRequest, AttemptSink, ServiceErrorShape } from './attempt.js';
import { createAttemptEnding } from './attempt-ending.js';

/** The socket's URL for a service's base URL: `http(s)` becomes `ws(s)`, `/graphql` is added. */
export function webSocketUrl(url: string): string {
  return `${url.replace(/\/+$/, '').replace(/^http/, 'ws')}/graphql`;
}

/** Opens `request` over a new graphql-ws socket, reporting to `sink`. */
export function openWsAttempt(request: AttemptRequest, sink: AttemptSink): Attempt {
  const ending = createAttemptEnding(request, sink);
  const client = createClient({
    url: webSocketUrl(request.url),
    connectionParams: { authorization: `Bearer ${request.token}` },
    lazy: true,
    retryAttempts: 0,
    keepAlive: Math.max(1, Math.floor(request.deadAfterMs / 3)),
    ...(request.webSocketImpl === undefined ? {} : { webSocketImpl: quietOnError(request.webSocketImpl) }),
    on: {
      message: ending.touch,
      connected: ending.touch,
      // Every close ends the attempt here, before graphql-ws would act on it: it reconnects by
      // itself after a normal close (1000) while a subscription is open, whatever retryAttempts
      // says, and would send this attempt's cursor again.
      closed: (event) => ending.end(wsEnding(event)),
    },
  });
  // terminate() closes the socket at once, even one still connecting, which dispose() would wait
  // for; dispose() then only settles graphql-ws's state (a connect that failed rejects it: ignored).
  ending.start(() => {
    client.terminate();
    void Promise.resolve(client.dispose()).catch(() => undefined);
  });
  client.subscribe(
    { query: request.query, variables: { ...request.variables }, extensions: { ...request.extensions } },
    { next: ending.result, complete: () => ending.end({ kind: 'complete' }), error: (error) => ending.end(wsEnding(error)) },
  );
  return ending.attempt;
}

/** What graphql-ws reports as a subscription's error: the operation's errors, a close event, or an Error. */
function wsEnding(error: unknown): AttemptEnd {
  if (Array.isArray(error)) return { kind: 'errors', errors: error as ServiceErrorShape[] };
  if (error !== null && typeof error === 'object' && 'code' in error && typeof error.code === 'number') {
    return { kind: 'closed', code: error.code, reason: String((error as { reason?: unknown }).reason ?? '') };
  }
  // A socket that failed (refused, reset) reaches here as the WebSocket's error event, not an Error.
  const message = error instanceof Error ? error.message : (error as { message?: unknown } | null)?.message;
  return { kind: 'network', message: typeof message === 'string' && message !== '' ? message : 'the connection failed' };
}

/**
 * Node's `ws` package emits a socket's errors as Node events, and one closed while still connecting
 * errs ("closed before the connection was established"): graphql-ws's terminate() closes it after
 * taking its own handlers off, and an error event with no listener would crash the process. Each
 * socket the given class makes gets a listener of its own that ignores them (the attempt has ended
 * already, or graphql-ws reports the close). Statics (`OPEN`...) are inherited.
 */
function quietOnError(impl: unknown): unknown {
  if (typeof impl !== 'function') return impl;
  const Impl = impl as new (...args: never[]) => { addEventListener(type: 'error', listener: () => void): void };
  return class extends Impl {
    constructor(...args: never[]) {
      super(...args);
      this.addEventListener('error', () => undefined);
    }
  };
}
