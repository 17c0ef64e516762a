/** Resolvers of schema/*.graphql, typed by the generated resolver types. */
import { SCOPES } from '../auth/principal.js';
import type { TestMessage } from '../domain/types.js';
import { messageGlobalId } from '../domain/types.js';
import { ServiceError } from '../errors.js';
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
    test: async (_root, { correlationId }, { loaders, access, principal }) => {
      access.requireScope(principal, SCOPES.read);
      const test = await loaders.test.load(correlationId);
      return test !== null && access.canSee(principal, test) ? test : null;
    },
    tests: async (_root, { correlationIds }, { loaders, access, principal }) => {
      access.requireScope(principal, SCOPES.read);
      if (correlationIds.length > MAX_IDS_PER_QUERY) {
        throw new ServiceError('BAD_USER_INPUT', `At most ${MAX_IDS_PER_QUERY} correlation ids per query, got ${correlationIds.length}.`, {
          details: { argument: 'correlationIds' },
        });
      }
      const results = await loaders.test.loadMany(correlationIds);
      return results.map((result) => {
        if (result instanceof Error) throw result;
        return result !== null && access.canSee(principal, result) ? result : null;
      });
    },
  },

  Mutation: {
    startTest: (_root, { input }, { starter, access, principal }) => {
      access.requireScope(principal, SCOPES.write);
      return starter.start(input ?? null, principal.subject);
    },
  },

  Subscription: {
    testMessages: {
      subscribe: (_root, { correlationId, afterSequence }, { log, subscriptionQueueLimit, access, principal }) => {
        access.requireScope(principal, SCOPES.read);
        return log.follow(correlationId, {
          afterSequence: afterSequence ?? null,
          queueLimit: subscriptionQueueLimit,
          canSee: (test) => access.canSee(principal, test),
        });
      },
      // The stream yields stored messages as they are; the field's value is the message itself.
      resolve: (message: TestMessage) => message,
    },
  },

  Test: {
    // A summary (from a list or a change) holds no messages: they are read only when asked for.
    messages: async (test, { first, after }, { loaders }) => {
      const record = 'messages' in test ? test : await loaders.test.load(test.correlationId);
      return paginateMessages(record?.messages ?? [], first, after);
    },
    messageCount: (test) => ('messages' in test ? test.messages.length : test.messageCount),
  },

  TestMessageConnection: {
    nodes: (page) => page.edges.map((edge) => edge.node),
    pageInfo: (page) => ({ hasNextPage: page.hasNextPage, endCursor: page.edges.at(-1)?.cursor ?? null }),
  },

  TestMessage: {
    id: (message: TestMessage) => messageGlobalId(message),
  },
};
