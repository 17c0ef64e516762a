/** Resolvers of schema/*.graphql, typed by the generated resolver types. */
import type { TestMessage, TestRecord } from '../domain/types.js';
import { messageGlobalId } from '../domain/types.js';
import { ServiceError } from '../errors.js';
import { openTestMessageStream } from '../subscriptions/test-message-stream.js';
import type { Resolvers } from './generated/resolvers-types.js';
import { paginateMessages } from './pagination.js';
import { DateTimeScalar, JSONScalar } from './scalars.js';

/** Most ids one `tests` query may ask for. */
export const MAX_IDS_PER_QUERY = 100;

/** The resolver map. */
export const resolvers: Resolvers = {
  JSON: JSONScalar,
  DateTime: DateTimeScalar,

  Query: {
    test: (_root, { correlationId }, { loaders }) => loaders.test.load(correlationId),
    tests: async (_root, { correlationIds }, { loaders }) => {
      if (correlationIds.length > MAX_IDS_PER_QUERY) {
        throw new ServiceError('BAD_USER_INPUT', `At most ${MAX_IDS_PER_QUERY} correlation ids per query, got ${correlationIds.length}.`, {
          details: { argument: 'correlationIds' },
        });
      }
      const results = await loaders.test.loadMany(correlationIds);
      return results.map((result) => {
        if (result instanceof Error) throw result;
        return result;
      });
    },
  },

  Mutation: {
    startTest: (_root, { input }, { starter }) => starter.start(input ?? null),
  },

  Subscription: {
    testMessages: {
      subscribe: (_root, { correlationId, afterSequence }, { store, pubsub, subscriptionQueueLimit }) =>
        openTestMessageStream({ store, pubsub, correlationId, afterSequence: afterSequence ?? null, queueLimit: subscriptionQueueLimit }),
      // The stream yields stored messages as they are; the field's value is the message itself.
      resolve: (message: TestMessage) => message,
    },
  },

  Test: {
    messages: (test: TestRecord, { first, after }) => paginateMessages(test.messages, first, after),
    messageCount: (test: TestRecord) => test.messages.length,
  },

  TestMessageConnection: {
    nodes: (page) => page.edges.map((edge) => edge.node),
    pageInfo: (page) => ({ hasNextPage: page.hasNextPage, endCursor: page.edges.at(-1)?.cursor ?? null }),
  },

  TestMessage: {
    id: (message: TestMessage) => messageGlobalId(message),
  },
};
