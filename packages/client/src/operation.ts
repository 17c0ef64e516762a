/**
 * The one operation the library sends. `npm run codegen` types it from the schema (GraphQL Code
 * Generator's client preset, documents as strings: no GraphQL runtime in the bundle) into gql/.
 */
import { graphql } from './gql/index.js';

/** Every message of one test after `after` (all of them without it): the stored ones, then each new one; completes after the final one. */
export const FollowTest = graphql(`
  subscription FollowTest($id: ID!, $after: String) {
    testMessages(correlationId: $id, after: $after) {
      id
      cursor
      sequence
      status
      final
      payload
      producedAt
      receivedAt
    }
  }
`);
