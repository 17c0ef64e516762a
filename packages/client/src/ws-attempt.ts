/**
 * One attempt over graphql-ws: a socket of its own (the token in `connection_init`), one
 * `subscribe`, and how it ended. graphql-ws's own retries are off: a retry would send the same
 * `subscribe` again, with the cursor of the first attempt, where `follow` resumes after the last
 * message taken. The library pings every third of the dead-stream bound and takes a socket that
 * answers nothing (no message, no pong) for the whole bound as dead: graphql-ws's `terminate()`.
 */
import { createClient } from 'graphql-ws/client';
import { readResult, type Attempt, type AttemptEnd, type AttemptRequest, type AttemptSink, type ServiceErrorShape } from './attempt.js';
import { createWatchdog, type Watchdog } from './watchdog.js';

/** The socket's URL for a service's base URL: `http(s)` becomes `ws(s)`, `/graphql` is added. */
export function webSocketUrl(url: string): string {
  return `${url.replace(/\/+$/, '').replace(/^http/, 'ws')}/graphql`;
}

/** Opens `request` over a new graphql-ws socket, reporting to `sink`. */
export function openWsAttempt(request: AttemptRequest, sink: AttemptSink): Attempt {
  let ended = false;
  let dead = false;
  let watchdog: Watchdog | undefined;
  // terminate() closes the socket at once, even one still connecting, which dispose() would wait
  // for; dispose() then only settles graphql-ws's state (a connect that failed rejects it: ignored).
  const shut = () => {
    client.terminate();
    void Promise.resolve(client.dispose()).catch(() => undefined);
  };
  const end = (how: AttemptEnd) => {
    if (ended) return;
    ended = true;
    watchdog?.stop();
    sink.end(dead ? { kind: 'dead', afterMs: request.deadAfterMs } : how);
    shut();
  };
  const client = createClient({
    url: webSocketUrl(request.url),
    connectionParams: { authorization: `Bearer ${request.token}` },
    lazy: true,
    retryAttempts: 0,
    keepAlive: Math.max(1, Math.floor(request.deadAfterMs / 3)),
    ...(request.webSocketImpl === undefined ? {} : { webSocketImpl: request.webSocketImpl }),
    on: {
      message: () => watchdog?.touch(),
      connected: () => watchdog?.touch(),
      // Every close ends the attempt here, before graphql-ws would act on it: it reconnects by
      // itself after a normal close (1000) while a subscription is open, whatever retryAttempts
      // says, and would send this attempt's cursor again.
      closed: (event) => end(wsEnding(event)),
    },
  });
  watchdog = createWatchdog(request.deadAfterMs, () => {
    dead = true;
    end({ kind: 'dead', afterMs: request.deadAfterMs });
  });
  client.subscribe(
    { query: request.query, variables: { ...request.variables }, extensions: { ...request.extensions } },
    {
      next: (result) => {
        if (ended) return;
        const read = readResult(result as Parameters<typeof readResult>[0]);
        if ('message' in read) sink.push(read);
        else end({ kind: 'errors', errors: read });
      },
      complete: () => end({ kind: 'complete' }),
      error: (error) => end(wsEnding(error)),
    },
  );
  return {
    close: () => {
      ended = true;
      watchdog?.stop();
      shut();
    },
  };
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
