/**
 * Exact resume for the GraphQL clients people already use over graphql-ws (urql's
 * `subscriptionExchange`, Apollo Client's `GraphQLWsLink`): graphql-ws reconnects on its own after a
 * dropped connection and subscribes again with the payload it was given, so a subscription to
 * `testMessages(correlationId, after: $after)` would start over from the first `after` and hand
 * every message again. The client {@link withResume} returns keeps each subscription's `after` at the
 * cursor of the last result it passed on, so graphql-ws's next subscribe resumes right after it.
 */
import type { Client, Sink } from 'graphql-ws';

/** The cursor a result carries: `cursor` of its first top-level field that has one (`testMessages { cursor }`). */
function cursorOf(result: unknown): string | undefined {
  const data = (result as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null) return undefined;
  for (const field of Object.values(data)) {
    const cursor = (field as { cursor?: unknown } | null)?.cursor;
    if (typeof cursor === 'string') return cursor;
  }
  return undefined;
}

/**
 * `client` with each subscription resumed after its last result on every reconnect graphql-ws makes
 * (its `retryAttempts` and `shouldRetry` decide how often). The operation declares the variable
 * (`subscription ($id: ID!, $after: String) { testMessages(correlationId: $id, after: $after) { cursor ... } }`,
 * `variable` names another) and selects `cursor`. Only `subscribe`, which urql and Apollo Client
 * call, resumes; `iterate` is graphql-ws's own.
 */
export function withResume(client: Client, options: { readonly variable?: string } = {}): Client {
  const variable = options.variable ?? 'after';
  return {
    ...client,
    subscribe(payload, sink) {
      // graphql-ws sends this very object again on each reconnect: its `after` moves with the results.
      const variables: Record<string, unknown> = { ...payload.variables };
      const resumed = { ...payload, variables };
      const passing: Sink = {
        next: (result) => {
          const cursor = cursorOf(result);
          if (cursor !== undefined) variables[variable] = cursor;
          sink.next(result as never);
        },
        error: (error) => sink.error(error),
        complete: () => sink.complete(),
      };
      return client.subscribe(resumed, passing);
    },
  };
}
