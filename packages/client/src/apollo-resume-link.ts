/**
 * Exact resume inside Apollo Client, whatever carries the subscription: a plain `HttpLink`
 * (multipart HTTP subscriptions) behind Apollo's `RetryLink`, or a `GraphQLWsLink`. Both send the
 * operation again after a dropped connection (the `RetryLink` re-subscribes on the error, graphql-ws
 * on its reconnect), with the variables they were given, so `testMessages(correlationId, after: $after)`
 * would start over and hand every message again. The link {@link createResumeLink} returns moves
 * the operation's `after` to the cursor of each result it passes on, so the next send resumes right
 * after it. Put it first, before the `RetryLink`:
 *
 * ```ts
 * link: ApolloLink.from([createResumeLink(), new RetryLink(), new HttpLink({ uri, headers })])
 * ```
 */
import { ApolloLink } from '@apollo/client';
import { tap } from 'rxjs';
import { cursorOf } from './cursor-of.js';

/** Options of {@link createResumeLink}. */
export interface ResumeLinkOptions {
  /** The operation's variable that takes the cursor (default `after`). */
  readonly variable?: string;
}

/** Creates the link; see the file header. The operation declares the variable and selects `cursor`. */
export function createResumeLink(options: ResumeLinkOptions = {}): ApolloLink {
  const variable = options.variable ?? 'after';
  return new ApolloLink((operation, forward) =>
    forward(operation).pipe(
      tap((result) => {
        const cursor = cursorOf(result);
        // The links after this one read the operation's variables again on each send.
        if (cursor !== undefined) operation.variables[variable] = cursor;
      }),
    ),
  );
}
