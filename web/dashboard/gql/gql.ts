/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

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
    "\n  fragment TestFields on Test {\n    correlationId\n    status\n    input\n    messageCount\n    createdAt\n    updatedAt\n  }\n": typeof types.TestFieldsFragmentDoc,
    "\n  query RecentTests($first: Int!) {\n    recentTests(first: $first) {\n      nodes {\n        ...TestFields\n      }\n    }\n  }\n": typeof types.RecentTestsDocument,
    "\n  subscription TestChanges {\n    testChanges {\n      kind\n      test {\n        ...TestFields\n      }\n    }\n  }\n": typeof types.TestChangesDocument,
    "\n  query OneTest($id: ID!) {\n    test(correlationId: $id) {\n      ...TestFields\n    }\n  }\n": typeof types.OneTestDocument,
    "\n  mutation StartTest($input: StartTestInput!) {\n    startTest(input: $input) {\n      correlationId\n      test {\n        ...TestFields\n      }\n    }\n  }\n": typeof types.StartTestDocument,
};
const documents: Documents = {
    "\n  fragment TestFields on Test {\n    correlationId\n    status\n    input\n    messageCount\n    createdAt\n    updatedAt\n  }\n": types.TestFieldsFragmentDoc,
    "\n  query RecentTests($first: Int!) {\n    recentTests(first: $first) {\n      nodes {\n        ...TestFields\n      }\n    }\n  }\n": types.RecentTestsDocument,
    "\n  subscription TestChanges {\n    testChanges {\n      kind\n      test {\n        ...TestFields\n      }\n    }\n  }\n": types.TestChangesDocument,
    "\n  query OneTest($id: ID!) {\n    test(correlationId: $id) {\n      ...TestFields\n    }\n  }\n": types.OneTestDocument,
    "\n  mutation StartTest($input: StartTestInput!) {\n    startTest(input: $input) {\n      correlationId\n      test {\n        ...TestFields\n      }\n    }\n  }\n": types.StartTestDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TestFields on Test {\n    correlationId\n    status\n    input\n    messageCount\n    createdAt\n    updatedAt\n  }\n"): (typeof documents)["\n  fragment TestFields on Test {\n    correlationId\n    status\n    input\n    messageCount\n    createdAt\n    updatedAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RecentTests($first: Int!) {\n    recentTests(first: $first) {\n      nodes {\n        ...TestFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RecentTests($first: Int!) {\n    recentTests(first: $first) {\n      nodes {\n        ...TestFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription TestChanges {\n    testChanges {\n      kind\n      test {\n        ...TestFields\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription TestChanges {\n    testChanges {\n      kind\n      test {\n        ...TestFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OneTest($id: ID!) {\n    test(correlationId: $id) {\n      ...TestFields\n    }\n  }\n"): (typeof documents)["\n  query OneTest($id: ID!) {\n    test(correlationId: $id) {\n      ...TestFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartTest($input: StartTestInput!) {\n    startTest(input: $input) {\n      correlationId\n      test {\n        ...TestFields\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation StartTest($input: StartTestInput!) {\n    startTest(input: $input) {\n      correlationId\n      test {\n        ...TestFields\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;