/**
 * The media type of a GraphQL response body sent outside Apollo Server (a refusal at the HTTP edge,
 * before an event stream opens), chosen as Apollo Server chooses its own (GraphQL over HTTP): by the
 * request's `Accept` under the HTTP rules (q-values, then specificity, then the order listed), with
 * `application/json` when there is no `Accept`, on a tie, or when neither type is acceptable (a
 * client that accepts only `text/event-stream` still needs a body it can read). Apollo Client 4 reads
 * the `errors` of a non-2xx answer only in `application/graphql-response+json`, which it prefers.
 */

/** The two GraphQL response types, `application/json` first (the default and the winner of a tie). */
export const GRAPHQL_RESPONSE_TYPES: readonly string[] = ['application/json', 'application/graphql-response+json'];

/**
 * The types offered as Apollo Server offers them, with their charset: a range with parameters
 * (`application/json; charset=utf-8`) matches only a type offered with the same ones, and a range
 * without any matches them all. Apollo also offers JSON for its subscription callbacks.
 */
const OFFERED: readonly string[] = [...GRAPHQL_RESPONSE_TYPES.map((type) => `${type}; charset=utf-8`), 'application/json; callbackSpec=1.0; charset=utf-8'];

/**
 * The bare media type (no parameters) for a GraphQL response to a request, given its negotiator:
 * Express's `req.accepts` (jshttp's `accepts` over `negotiator`), which answers the best of the
 * types offered, the first one without `Accept`, and false when none is acceptable.
 */
export function graphQLResponseType(accepts: (types: string[]) => string | false): string {
  const chosen = accepts([...OFFERED]);
  return chosen === false ? 'application/json' : (chosen.split(';')[0] as string);
}

/** Whether a request's `Accept` takes a GraphQL response at all, as Apollo Server decides it (406 when not). */
export function acceptsGraphQLResponse(accepts: (types: string[]) => string | false): boolean {
  return accepts([...OFFERED]) !== false;
}

/**
 * The content type, with its parameters, that Apollo Server sends a single result in for a
 * request's `Accept` (`application/json; charset=utf-8` without one); undefined when it takes none
 * (Apollo answers 406).
 */
export function singleResultType(accepts: (types: string[]) => string | false): string | undefined {
  const chosen = accepts([...OFFERED]);
  return chosen === false ? undefined : chosen;
}
