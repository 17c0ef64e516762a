/**
 * Exact resume for the GraphQL clients people already use over graphql-ws or graphql-sse (urql's
 * `subscriptionExchange`, Apollo Client's `GraphQLWsLink`): both reconnect on their own after a
 * dropped connection and subscribe again with the request they were given, so a subscription to
 * `testMessages(correlationId, after: $after)` would start over from the first `after` and hand
 * every message again. The client {@link withResume} returns keeps each subscription's `after` at the
 * cursor of the last result it passed on, so the next subscribe resumes right after it.
 */
import { cursorOf } from './cursor-of.js';

/** What a result goes to: graphql-ws's and graphql-sse's `Sink`. */
interface ResultSink {
  next(value: never): void;
  error(error: unknown): void;
  complete(): void;
}

/** A client that subscribes with a request and a sink and sends that request again on each reconnect: graphql-ws's and graphql-sse's. */
export interface SubscribingClient {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each client's own sink and extra arguments pass through untouched
  subscribe(request: { readonly query: string; readonly variables?: Record<string, unknown> | null }, sink: any, ...rest: any[]): () => void;
}

/**
 * `client` (graphql-ws's or graphql-sse's) with each subscription resumed after its last result on
 * every reconnect the client makes (its `retryAttempts`, and graphql-ws's `shouldRetry`, decide how
 * often). The operation declares the variable (`subscription ($id: ID!, $after: String) { testMessages(correlationId: $id, after: $after) { cursor ... } }`,
 * `variable` names another) and selects `cursor`. Only `subscribe`, which urql and Apollo Client
 * call, resumes; `iterate` is the client's own.
 */
export function withResume<C extends SubscribingClient>(client: C, options: { readonly variable?: string } = {}): C {
  const variable = options.variable ?? 'after';
  const subscribe: SubscribingClient['subscribe'] = (request, sink: ResultSink, ...rest) => {
    // The client sends this very object again on each reconnect: its `after` moves with the results.
    const variables: Record<string, unknown> = { ...request.variables };
    const passing: ResultSink = {
      next: (result) => {
        const cursor = cursorOf(result);
        if (cursor !== undefined) variables[variable] = cursor;
        sink.next(result);
      },
      error: (error) => sink.error(error),
      complete: () => sink.complete(),
    };
    return client.subscribe({ ...request, variables }, passing, ...rest);
  };
  return { ...client, subscribe };
}
