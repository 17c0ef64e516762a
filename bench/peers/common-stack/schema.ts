/**
 * The peer's schema: the service's `startTest`, `test`, `tests` and `testMessages`, with the same
 * field names so the same client operations run against both, and resolvers as the Apollo Server
 * and graphql-subscriptions documentation shows them: a DataLoader per request for tests, and a
 * subscription that is the store's one `PubSub` trigger narrowed by `withFilter`.
 */
import { makeExecutableSchema } from '@graphql-tools/schema';
import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import { withFilter, type PubSubEngine } from 'graphql-subscriptions';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import { randomUUID } from 'node:crypto';
import type { PeerMessage, PeerStore, PeerTest } from './store.js';

/** The single PubSub trigger every stored message is published on. */
export const RESULT_STORED = 'RESULT_STORED';

const typeDefs = /* GraphQL */ `
  scalar JSON
  scalar DateTime
  enum TestStatus {
    PENDING
    RUNNING
    COMPLETED
    FAILED
  }
  type Test {
    correlationId: ID!
    status: TestStatus!
    input: JSON
    messages(first: Int = 100, after: String): TestMessageConnection!
    messageCount: Int!
    createdAt: DateTime!
    updatedAt: DateTime!
  }
  type TestMessageConnection {
    nodes: [TestMessage!]!
    pageInfo: PageInfo!
    totalCount: Int!
  }
  type PageInfo {
    hasNextPage: Boolean!
    endCursor: String
  }
  type TestMessage {
    id: ID!
    correlationId: ID!
    sequence: Int
    status: TestStatus
    final: Boolean!
    payload: JSON
    receivedAt: DateTime!
  }
  input StartTestInput {
    name: String
    parameters: JSON
  }
  type StartTestPayload {
    correlationId: ID!
    test: Test!
  }
  type Query {
    test(correlationId: ID!): Test
    tests(correlationIds: [ID!]!): [Test]!
  }
  type Mutation {
    startTest(input: StartTestInput): StartTestPayload!
  }
  type Subscription {
    testMessages(correlationId: ID!): TestMessage!
  }
`;

/** What every operation gets: the caller, and the loaders made for this request alone. */
export interface PeerContext {
  readonly subject: string;
  readonly loaders: { readonly test: DataLoader<string, PeerTest | null> };
}

/** What the resolvers are built on. */
export interface PeerSchemaDeps {
  readonly store: PeerStore;
  readonly pubsub: PubSubEngine;
  /** The trigger stored messages are published on (default {@link RESULT_STORED}). */
  readonly trigger?: string;
  /** Hands a started test's request to the external system (a Kafka producer, in the server). */
  readonly requestTest: (correlationId: string, input: unknown) => Promise<void>;
}

/** A new context for one request or one subscription: DataLoader is per request, as its README says. */
export function createPeerContext(store: PeerStore, subject: string): PeerContext {
  return { subject, loaders: { test: new DataLoader((ids: readonly string[]) => store.getTests(ids)) } };
}

/** The executable schema. */
export function createPeerSchema({ store, pubsub, trigger = RESULT_STORED, requestTest }: PeerSchemaDeps): GraphQLSchema {
  const date = (ms: number) => new Date(ms);
  return makeExecutableSchema({
    typeDefs,
    resolvers: {
      JSON: JSONResolver,
      DateTime: DateTimeResolver,
      Query: {
        test: (_: unknown, args: { correlationId: string }, ctx: PeerContext) => ctx.loaders.test.load(args.correlationId),
        tests: (_: unknown, args: { correlationIds: string[] }, ctx: PeerContext) => ctx.loaders.test.loadMany(args.correlationIds),
      },
      Test: {
        createdAt: (t: PeerTest) => date(t.createdAt),
        updatedAt: (t: PeerTest) => date(t.updatedAt),
        messages: async (t: PeerTest, args: { first: number; after?: string | null }) => {
          const after = args.after == null ? undefined : Number(args.after);
          const first = Math.max(0, Math.min(1000, args.first));
          const page = await store.getMessages(t.correlationId, first, after);
          const last = (after ?? -1) + page.nodes.length;
          return { ...page, pageInfo: { hasNextPage: last + 1 < page.totalCount, endCursor: page.nodes.length === 0 ? null : String(last) } };
        },
      },
      TestMessage: { receivedAt: (m: PeerMessage) => date(m.receivedAt) },
      Mutation: {
        startTest: async (_: unknown, args: { input?: unknown }, ctx: PeerContext) => {
          const correlationId = randomUUID();
          await store.createTest(correlationId, args.input ?? null);
          await requestTest(correlationId, args.input ?? null);
          return { correlationId, test: await ctx.loaders.test.load(correlationId) };
        },
      },
      Subscription: {
        testMessages: {
          subscribe: withFilter(
            () => pubsub.asyncIterableIterator(trigger),
            (payload?: { testMessages: PeerMessage }, variables?: { correlationId: string }) =>
              payload?.testMessages.correlationId === variables?.correlationId,
          ),
        },
      },
    },
  });
}
