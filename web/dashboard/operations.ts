/**
 * Every GraphQL operation the dashboard sends. `npm run codegen` types each document from the
 * schema (GraphQL Code Generator's client preset, into gql/), so results and variables are
 * checked against schema/schema.graphql at build time.
 */
import { graphql } from './gql/index.js';

/** What the list and the detail show of a test. */
export const TestFields = graphql(`
  fragment TestFields on Test {
    correlationId
    status
    input
    messageCount
    createdAt
    updatedAt
  }
`);

/** The signed-in user's most recent tests: the list's starting point, read again after a reconnect. */
export const RecentTests = graphql(`
  query RecentTests($first: Int!) {
    recentTests(first: $first) {
      nodes {
        ...TestFields
      }
    }
  }
`);

/** Each test of the user as it is created or changes status or message count (nothing replayed). */
export const TestChanges = graphql(`
  subscription TestChanges {
    testChanges {
      kind
      test {
        ...TestFields
      }
    }
  }
`);

/** One test, for the detail view's header. */
export const OneTest = graphql(`
  query OneTest($id: ID!) {
    test(correlationId: $id) {
      ...TestFields
    }
  }
`);

/** Starts a test with a name and parameters. */
export const StartTest = graphql(`
  mutation StartTest($input: StartTestInput!) {
    startTest(input: $input) {
      correlationId
      test {
        ...TestFields
      }
    }
  }
`);
