/* eslint-disable */
import * as types from './graphql.js';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  subscription FollowTest($id: ID!, $after: String) {\n    testMessages(correlationId: $id, after: $after) {\n      id\n      cursor\n      sequence\n      status\n      final\n      payload\n      producedAt\n      receivedAt\n    }\n  }\n": typeof types.FollowTestDocument,
};
const documents: Documents = {
    "\n  subscription FollowTest($id: ID!, $after: String) {\n    testMessages(correlationId: $id, after: $after) {\n      id\n      cursor\n      sequence\n      status\n      final\n      payload\n      producedAt\n      receivedAt\n    }\n  }\n": types.FollowTestDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FollowTest($id: ID!, $after: String) {\n    testMessages(correlationId: $id, after: $after) {\n      id\n      cursor\n      sequence\n      status\n      final\n      payload\n      producedAt\n      receivedAt\n    }\n  }\n"): typeof import('./graphql.js').FollowTestDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
