/**
 * One attempt over graphql-sse (distinct connections: one request, one stream): the token in the
 * Authorization header, and how it ended. graphql-sse's own retries are off, as graphql-ws's are.
 * Every chunk of the response (events and the service's keep-alive comments, which graphql-sse's
 * parser does not surface) is a sign of life: the response body is read through a stream that
 * touches the watchdog, and a stream silent for the dead-stream bound is aborted.
 */
import { createClient, NetworkError } from 'graphql-sse';
import type { Attempt, AttemptEnd, AttemptRequest, AttemptSink, ServiceErrorShape } from './attempt.js';
import { createAttemptEnding } from './attempt-ending.js';

/** Opens `request` as one SSE request, reporting to `sink`. */
export function openSseAttempt(request: AttemptRequest, sink: AttemptSink): Attempt {
  const ending = createAttemptEnding(request, sink);
  let completed = false;
  const client = createClient({
    url: `${request.url.replace(/\/+$/, '')}/graphql`,
    headers: { authorization: `Bearer ${request.token}` },
    retryAttempts: 0,
    fetchFn: watchedFetch(request.fetch ?? fetch, ending.touch),
    // The server's complete event, told apart from a stream that merely stopped (a killed server's
    // connection can end without an error in some browsers, which graphql-sse then reports as complete).
    onMessage: (message) => {
      if (message.event === 'complete') completed = true;
    },
  });
  // Disposing aborts the request (graphql-sse aborts its own signal, which the fetch was given, at once).
  ending.start(() => client.dispose());
  client.subscribe(
    { query: request.query, variables: { ...request.variables }, extensions: { ...request.extensions } },
    {
      next: ending.result,
      complete: () => ending.end(completed ? { kind: 'complete' } : { kind: 'network', message: 'the event stream ended without completing' }),
      error: (error) => void sseEnding(error).then(ending.end),
    },
  );
  return ending.attempt;
}

/** A fetch whose response body calls `alive` with every chunk (events and keep-alive comments alike). */
function watchedFetch(base: typeof fetch, alive: () => void): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    alive();
    if (response.body === null) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          alive();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What graphql-sse reports as an error: a refusal (its response), or a broken connection. */
async function sseEnding(error: unknown): Promise<AttemptEnd> {
  const response = error instanceof NetworkError ? error.response : undefined;
  if (response === undefined) return { kind: 'network', message: `the connection failed (${error instanceof Error ? error.message : String(error)})` };
  const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
  let errors: readonly ServiceErrorShape[] = [];
  try {
    errors = ((await response.json()) as { errors?: ServiceErrorShape[] }).errors ?? [];
  } catch {
    // A body that is not the service's JSON (a proxy's page): the status says enough.
  }
  return { kind: 'refused', status: response.status, errors, retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : undefined };
}
