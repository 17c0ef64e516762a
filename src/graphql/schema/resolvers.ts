/** Resolvers of schema/*.graphql, typed by the generated resolver types. */
import { jsonField } from '../../domain/json-text.js';
import type { TestChangeEvent, TestMessage } from '../../domain/types.js';
import { messageGlobalId } from '../../domain/types.js';
import { ServiceError } from '../../base/errors.js';
import { deliveryNoteOf } from '../fanout/delivery-notes.js';
import type { Resolvers, ResolversParentTypes, ResolversTypes } from './generated/resolvers-types.js';
import { decodeCursor, encodeCursor, messageRange, paginateMessages, toMessagePage } from './pagination.js';
import { DateTimeScalar, JSONScalar } from './scalars.js';
import { canonicalCorrelationId } from '../../domain/correlation-id.js';
import { sourceOnly } from './source-only.js';

/** Most ids one `tests` query may ask for. */
export const MAX_IDS_PER_QUERY = 100;

/** Largest page of `recentTests`. */
export const MAX_TESTS_PER_PAGE = 100;

/**
 * The resolver map. The caller's scope for the operation's type was checked once, when the
 * operation was admitted (pipeline/plugins/scope-admission.ts), and which tests it may see once
 * per operation, in its context (`visibility`, which the test loader applies): no resolver checks
 * either itself.
 */
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
    recentTests: (_root, { first, after, status }, { log, visibility }) => {
      if (!Number.isInteger(first) || first < 1 || first > MAX_TESTS_PER_PAGE) {
        throw new ServiceError('BAD_USER_INPUT', `first must be between 1 and ${MAX_TESTS_PER_PAGE}`, { details: { argument: 'first' } });
      }
      // The same rule as `test`: one's own tests, or every test with the admin scope.
      const owner = visibility.owner === undefined ? {} : { owner: visibility.owner };
      return log.list({ ...owner, first, after: after ?? null, statuses: status ?? null });
    },
  },

  Mutation: {
    startTest: (_root, { input, correlationId }, { starter, principal }) => starter.start(input ?? null, principal.subject, correlationId ?? undefined),
  },

  Subscription: {
    testMessages: {
      subscribe: (_root, { correlationId: spelled, afterSequence, after }, { log, subscriptionQueueLimit, visibility, resumeAfter }) => {
        const correlationId = canonicalCorrelationId(spelled);
        // A reconnect's Last-Event-ID is later than whatever the first request resumed from.
        const cursor = resumeAfter ?? after;
        const resumed = cursor === null || cursor === undefined ? null : decodeCursor(cursor, correlationId);
        return log.follow(correlationId, {
          afterSequence: resumeAfter === undefined ? (afterSequence ?? null) : null,
          afterKey: resumed?.key ?? null,
          afterArrival: resumed?.arrival ?? null,
          queueLimit: subscriptionQueueLimit,
          canSee: visibility.canSee,
        });
      },
      // The stream yields stored messages as they are; the field's value is the message itself.
      resolve: sourceOnly((message: TestMessage) => message),
    },
    testChanges: {
      subscribe: (_root, _args, { log, subscriptionQueueLimit, visibility }) => {
        return log.changes({ queueLimit: subscriptionQueueLimit, canSee: visibility.canSee });
      },
      resolve: sourceOnly((change: TestChangeEvent) => change),
    },
  },

  TestConnection: {
    nodes: (page) => page.edges.map((edge) => edge.node),
    pageInfo: (page) => ({ hasNextPage: page.hasNextPage, endCursor: page.edges.at(-1)?.cursor ?? null }),
  },

  Test: {
    // A summary (from `test`, `tests`, a list or a change) holds no messages: the page asked for is
    // read when the selection asks for it, and only once the parent was answered (so the caller may
    // see the test). Read afresh for each change of a subscription. A whole record (startTest's) holds them.
    messages: async (test, { first, after }, { log }) => {
      if ('messages' in test) return paginateMessages(test.correlationId, test.messages, first, after);
      const slice = await log.messages(test.correlationId, messageRange(test.correlationId, first, after));
      return toMessagePage(slice ?? { messages: [], hasNextPage: false, totalCount: 0 });
    },
    messageCount: { resolve: sourceOnly((test: ResolversParentTypes['Test']) => ('messages' in test ? test.messages.length : test.messageCount)) },
    // A change that did not set the input (an append's, on Redis) does not carry it: read it then.
    input: async (test, _args, { loaders }) => (test.input !== undefined ? test.input : ((await loaders.test.load(test.correlationId))?.input ?? null)),
  },

  TestMessageConnection: {
    nodes: (page) => page.edges.map((edge) => edge.node),
    pageInfo: (page) => ({ hasNextPage: page.hasNextPage, endCursor: page.edges.at(-1)?.cursor ?? null }),
  },

  // Pure functions of their parent, as every field below a subscription root must be
  // (fanout/shared-results.ts), and marked so: a push that selects only such fields is answered
  // without graphql-js's execution (fanout/plain-execution.ts). In the object form, because
  // graphql-tools binds a resolver given as a function (a new function, without the mark).
  TestMessage: {
    id: { resolve: sourceOnly((message: TestMessage) => messageGlobalId(message)) },
    // The stored text where the store keeps one (the memory log), copied into the response as it is.
    payload: { resolve: sourceOnly((message: TestMessage) => jsonField(message, 'payload')) },
    cursor: { resolve: sourceOnly((message: TestMessage) => encodeCursor(message)) },
    // Set on a push that tells its subscriber something (fanout/delivery-notes.ts), null otherwise.
    delivery: { resolve: sourceOnly((message: TestMessage) => deliveryNoteOf(message) as ResolversTypes['DeliveryNote'] | null) },
  },
};
