/* Generated from schema/*.graphql by GraphQL Code Generator (npm run codegen). Do not edit. */
import type { GraphQLResolveInfo, GraphQLScalarType, GraphQLScalarTypeConfig } from 'graphql';
import type { TestView as TestViewModel, TestListPage as TestListPageModel, TestListEdge as TestListEdgeModel, TestChangeEvent as TestChangeEventModel, TestMessage as TestMessageModel, MessagePage as MessagePageModel, MessageEdge as MessageEdgeModel, StartTestResult as StartTestResultModel } from '../../../domain/types.js';
import type { GraphQLContext } from '../../pipeline/context.js';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type RequireFields<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** An instant in time, as an RFC 3339 / ISO 8601 string in UTC, e.g. `2026-11-21T10:15:30.123Z`. */
  DateTime: { input: number; output: number; }
  /**
   * Arbitrary JSON value: an object, array, string, number, boolean or null.
   * Result payloads are passed through exactly as the external system published them.
   */
  JSON: { input: unknown; output: unknown; }
};

/** A delivery guarantee a `testMessages` subscription may ask for (docs/delivery.md). */
export type DeliveryGuarantee =
  /** A client that resumes from its last cursor misses nothing. */
  | 'AT_LEAST_ONCE'
  /** The same stream, named for a client that does not resume. */
  | 'AT_MOST_ONCE';

/** What a subscriber of `testMessages` is told about its delivery, on the push it concerns. */
export type DeliveryNote = {
  __typename?: 'DeliveryNote';
  /** During a catch-up: the messages still to come after this one (0 on its last push). */
  behind?: Maybe<Scalars['Int']['output']>;
  /** True on each push of a catch-up from the store (the subscriber fell behind and is being brought up to date). */
  catchingUp: Scalars['Boolean']['output'];
  /** With `guarantee`: what a stored message outlives (`none`, `restarts` or `failovers`), so what a resume can count on. */
  durable?: Maybe<Scalars['String']['output']>;
  /** On the first push of a subscription that asked for a guarantee: the guarantee granted. */
  guarantee?: Maybe<DeliveryGuarantee>;
  /** True on the first push once the subscriber is live again after a catch-up. */
  live: Scalars['Boolean']['output'];
  /** With `guarantee`: where the messages are kept (`memory`, `redis` or `replicated`). */
  store?: Maybe<Scalars['String']['output']>;
};

/** Starting external operations. */
export type Mutation = {
  __typename?: 'Mutation';
  /**
   * Starts a test: records it and hands the request to the external system. Its correlation id is
   * generated, or the one given: a UUID of the caller's making, which makes a retry safe. A start whose
   * answer never came (a timeout, a dropped connection, `BROKER_UNAVAILABLE`) may still have reached
   * the external system; the same call again, with the same `correlationId` and input, answers the
   * same test and sends the same request again, never a second test.
   */
  startTest: StartTestPayload;
};


/** Starting external operations. */
export type MutationStartTestArgs = {
  correlationId?: InputMaybe<Scalars['ID']['input']>;
  input?: InputMaybe<StartTestInput>;
};

/** Paging information, as in the GraphQL Cursor Connections convention. */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** Cursor of the last item of this page, or null when the page is empty. */
  endCursor?: Maybe<Scalars['String']['output']>;
  /** True when more items (messages or tests) follow this page. */
  hasNextPage: Scalars['Boolean']['output'];
};

/** Reads of accumulated results. They read the service's state only, never the message broker. */
export type Query = {
  __typename?: 'Query';
  /** Tests the caller started (every test, for a caller with the admin scope), newest first. */
  recentTests: TestConnection;
  /** One test, or null when no test has this correlation id. */
  test?: Maybe<Test>;
  /** Several tests at once (at most 100 ids), in the order asked; null where an id is unknown. */
  tests: Array<Maybe<Test>>;
};


/** Reads of accumulated results. They read the service's state only, never the message broker. */
export type QueryRecentTestsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  status?: InputMaybe<Array<TestStatus>>;
};


/** Reads of accumulated results. They read the service's state only, never the message broker. */
export type QueryTestArgs = {
  correlationId: Scalars['ID']['input'];
};


/** Reads of accumulated results. They read the service's state only, never the message broker. */
export type QueryTestsArgs = {
  correlationIds: Array<Scalars['ID']['input']>;
};

/** What to start. The fields are passed to the external system unchanged. */
export type StartTestInput = {
  /** A human-readable name for the run. */
  name?: InputMaybe<Scalars['String']['input']>;
  /** Parameters for the external system, any JSON object. */
  parameters?: InputMaybe<Scalars['JSON']['input']>;
};

/** The result of `startTest`. */
export type StartTestPayload = {
  __typename?: 'StartTestPayload';
  /** Identifier to read and subscribe to the results with. */
  correlationId: Scalars['ID']['output'];
  /** The new test, with no results yet. */
  test: Test;
};

/** Live updates. */
export type Subscription = {
  __typename?: 'Subscription';
  /**
   * Each change to the caller's tests (every test's, with the admin scope): started, new status,
   * new message count. Nothing is replayed.
   */
  testChanges: TestChange;
  /**
   * Every result message of one test, in the order they arrived: first those already stored (after
   * `after` or `afterSequence` when given), then each new one as it arrives, with no gap and no
   * duplicate. Completes after the final message. (Show them by `sequence`, as `messages` lists them.)
   */
  testMessages: TestMessage;
};


/** Live updates. */
export type SubscriptionTestMessagesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  afterSequence?: InputMaybe<Scalars['Int']['input']>;
  correlationId: Scalars['ID']['input'];
  deliveryGuarantee?: InputMaybe<DeliveryGuarantee>;
};

/**
 * One external operation started through this service, and every result message received for it.
 * Records expire after the configured time to live without new results.
 */
export type Test = {
  __typename?: 'Test';
  /** Identifier generated when the test was started; every result message carries it. */
  correlationId: Scalars['ID']['output'];
  /** When the test was started (or first seen). */
  createdAt: Scalars['DateTime']['output'];
  /** The input given to `startTest`, or null when the test was first seen through its results. */
  input?: Maybe<Scalars['JSON']['output']>;
  /** How many distinct result messages have been received (duplicates are not counted). */
  messageCount: Scalars['Int']['output'];
  /** Results received so far, ordered by `sequence` where the external system gave one, else by arrival. */
  messages: TestMessageConnection;
  /** Where the test stands. */
  status: TestStatus;
  /** When the record last changed. */
  updatedAt: Scalars['DateTime']['output'];
};


/**
 * One external operation started through this service, and every result message received for it.
 * Records expire after the configured time to live without new results.
 */
export type TestMessagesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};

/** A change to one of the caller's tests. */
export type TestChange = {
  __typename?: 'TestChange';
  /** What happened. */
  kind: TestChangeKind;
  /** The test as it stands after the change. */
  test: Test;
};

/** What happened to a test. */
export type TestChangeKind =
  /** The test was started. */
  | 'CREATED'
  /** Its status or message count changed. */
  | 'UPDATED';

/** A page of tests, newest first. */
export type TestConnection = {
  __typename?: 'TestConnection';
  /** The tests of this page with their cursors. */
  edges: Array<TestEdge>;
  /** The tests of this page, newest first. */
  nodes: Array<Test>;
  /** Where this page stands in the whole list. */
  pageInfo: PageInfo;
  /** How many tests match, in all. */
  totalCount: Scalars['Int']['output'];
};

/** A test with the cursor that points at it. */
export type TestEdge = {
  __typename?: 'TestEdge';
  /** Opaque cursor; pass it as `after` to continue after this test. */
  cursor: Scalars['String']['output'];
  /** The test. */
  node: Test;
};

/** One result message published by the external system for a test. */
export type TestMessage = {
  __typename?: 'TestMessage';
  /** The test this message belongs to. */
  correlationId: Scalars['ID']['output'];
  /**
   * Opaque cursor of this message, the same as its `edges.cursor` in `messages`: pass it as `after`
   * to `testMessages` (or to `messages`) to continue right after this message.
   */
  cursor: Scalars['String']['output'];
  /**
   * On a push of `testMessages`: what this subscriber is told about its delivery with this push (the
   * confirmation of its guarantee, a catch-up, being live again), the same as the push's
   * `extensions.delivery`, for clients whose gateway drops a response's extensions. Null when the
   * push has nothing to tell, and outside subscriptions.
   */
  delivery?: Maybe<DeliveryNote>;
  /** True when this message marked the test as finished. */
  final: Scalars['Boolean']['output'];
  /** Globally unique identifier: the correlation id and the message's deduplication key. */
  id: Scalars['ID']['output'];
  /** The external system's message id, when it sent one. */
  messageId?: Maybe<Scalars['String']['output']>;
  /** The result itself, as published. */
  payload?: Maybe<Scalars['JSON']['output']>;
  /** When the external system says it produced the message, when it said so. */
  producedAt?: Maybe<Scalars['DateTime']['output']>;
  /** When this service stored the message. */
  receivedAt: Scalars['DateTime']['output'];
  /** The external system's sequence number, when it sent one. */
  sequence?: Maybe<Scalars['Int']['output']>;
  /** Status the message reported, when it reported one. */
  status?: Maybe<TestStatus>;
};

/** A page of result messages. */
export type TestMessageConnection = {
  __typename?: 'TestMessageConnection';
  /** The messages of this page with their cursors. */
  edges: Array<TestMessageEdge>;
  /** The messages of this page, in order. */
  nodes: Array<TestMessage>;
  /** Where this page stands in the whole list. */
  pageInfo: PageInfo;
  /** How many messages the test has in all. */
  totalCount: Scalars['Int']['output'];
};

/** A message with the cursor that points at it. */
export type TestMessageEdge = {
  __typename?: 'TestMessageEdge';
  /** Opaque cursor; pass it as `after` to continue after this message. */
  cursor: Scalars['String']['output'];
  /** The message. */
  node: TestMessage;
};

/** Where a test stands, derived from the results received so far. */
export type TestStatus =
  /** A final result reported success (or did not report a failure). */
  | 'COMPLETED'
  /** A final result reported failure. */
  | 'FAILED'
  /** Started; no result has been received yet. */
  | 'PENDING'
  /** At least one result has been received and no final one yet. */
  | 'RUNNING';



export type ResolverTypeWrapper<T> = Promise<T> | T;


export type ResolverWithResolve<TResult, TParent, TContext, TArgs> = {
  resolve: ResolverFn<TResult, TParent, TContext, TArgs>;
};
export type Resolver<TResult, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = ResolverFn<TResult, TParent, TContext, TArgs> | ResolverWithResolve<TResult, TParent, TContext, TArgs>;

export type ResolverFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => Promise<TResult> | TResult;

export type SubscriptionSubscribeFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => AsyncIterable<TResult> | Promise<AsyncIterable<TResult>>;

export type SubscriptionResolveFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

export interface SubscriptionSubscriberObject<TResult, TKey extends string, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<{ [key in TKey]: TResult }, TParent, TContext, TArgs>;
  resolve?: SubscriptionResolveFn<TResult, { [key in TKey]: TResult }, TContext, TArgs>;
}

export interface SubscriptionResolverObject<TResult, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<any, TParent, TContext, TArgs>;
  resolve: SubscriptionResolveFn<TResult, any, TContext, TArgs>;
}

export type SubscriptionObject<TResult, TKey extends string, TParent, TContext, TArgs> =
  | SubscriptionSubscriberObject<TResult, TKey, TParent, TContext, TArgs>
  | SubscriptionResolverObject<TResult, TParent, TContext, TArgs>;

export type SubscriptionResolver<TResult, TKey extends string, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> =
  | ((...args: any[]) => SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>)
  | SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>;

export type TypeResolveFn<TTypes, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (
  parent: TParent,
  context: TContext,
  info: GraphQLResolveInfo
) => Maybe<TTypes> | Promise<Maybe<TTypes>>;

export type IsTypeOfResolverFn<T = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (obj: T, context: TContext, info: GraphQLResolveInfo) => boolean | Promise<boolean>;

export type NextResolverFn<T> = () => Promise<T>;

export type DirectiveResolverFn<TResult = Record<PropertyKey, never>, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = (
  next: NextResolverFn<TResult>,
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;





/** Mapping between all available schema types and the resolvers types */
export type ResolversTypes = {
  Boolean: ResolverTypeWrapper<Scalars['Boolean']['output']>;
  DateTime: ResolverTypeWrapper<Scalars['DateTime']['output']>;
  DeliveryGuarantee: DeliveryGuarantee;
  DeliveryNote: ResolverTypeWrapper<DeliveryNote>;
  ID: ResolverTypeWrapper<Scalars['ID']['output']>;
  Int: ResolverTypeWrapper<Scalars['Int']['output']>;
  JSON: ResolverTypeWrapper<Scalars['JSON']['output']>;
  Mutation: ResolverTypeWrapper<Record<PropertyKey, never>>;
  PageInfo: ResolverTypeWrapper<PageInfo>;
  Query: ResolverTypeWrapper<Record<PropertyKey, never>>;
  StartTestInput: StartTestInput;
  StartTestPayload: ResolverTypeWrapper<StartTestResultModel>;
  String: ResolverTypeWrapper<Scalars['String']['output']>;
  Subscription: ResolverTypeWrapper<Record<PropertyKey, never>>;
  Test: ResolverTypeWrapper<TestViewModel>;
  TestChange: ResolverTypeWrapper<TestChangeEventModel>;
  TestChangeKind: TestChangeKind;
  TestConnection: ResolverTypeWrapper<TestListPageModel>;
  TestEdge: ResolverTypeWrapper<TestListEdgeModel>;
  TestMessage: ResolverTypeWrapper<TestMessageModel>;
  TestMessageConnection: ResolverTypeWrapper<MessagePageModel>;
  TestMessageEdge: ResolverTypeWrapper<MessageEdgeModel>;
  TestStatus: TestStatus;
};

/** Mapping between all available schema types and the resolvers parents */
export type ResolversParentTypes = {
  Boolean: Scalars['Boolean']['output'];
  DateTime: Scalars['DateTime']['output'];
  DeliveryNote: DeliveryNote;
  ID: Scalars['ID']['output'];
  Int: Scalars['Int']['output'];
  JSON: Scalars['JSON']['output'];
  Mutation: Record<PropertyKey, never>;
  PageInfo: PageInfo;
  Query: Record<PropertyKey, never>;
  StartTestInput: StartTestInput;
  StartTestPayload: StartTestResultModel;
  String: Scalars['String']['output'];
  Subscription: Record<PropertyKey, never>;
  Test: TestViewModel;
  TestChange: TestChangeEventModel;
  TestConnection: TestListPageModel;
  TestEdge: TestListEdgeModel;
  TestMessage: TestMessageModel;
  TestMessageConnection: MessagePageModel;
  TestMessageEdge: MessageEdgeModel;
};

export interface DateTimeScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['DateTime'], any> {
  name: 'DateTime';
}

export type DeliveryNoteResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['DeliveryNote'] = ResolversParentTypes['DeliveryNote']> = {
  behind?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  catchingUp?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  durable?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  guarantee?: Resolver<Maybe<ResolversTypes['DeliveryGuarantee']>, ParentType, ContextType>;
  live?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  store?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
};

export interface JsonScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['JSON'], any> {
  name: 'JSON';
}

export type MutationResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Mutation'] = ResolversParentTypes['Mutation']> = {
  startTest?: Resolver<ResolversTypes['StartTestPayload'], ParentType, ContextType, Partial<MutationStartTestArgs>>;
};

export type PageInfoResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['PageInfo'] = ResolversParentTypes['PageInfo']> = {
  endCursor?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  hasNextPage?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
};

export type QueryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Query'] = ResolversParentTypes['Query']> = {
  recentTests?: Resolver<ResolversTypes['TestConnection'], ParentType, ContextType, RequireFields<QueryRecentTestsArgs, 'first'>>;
  test?: Resolver<Maybe<ResolversTypes['Test']>, ParentType, ContextType, RequireFields<QueryTestArgs, 'correlationId'>>;
  tests?: Resolver<Array<Maybe<ResolversTypes['Test']>>, ParentType, ContextType, RequireFields<QueryTestsArgs, 'correlationIds'>>;
};

export type StartTestPayloadResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['StartTestPayload'] = ResolversParentTypes['StartTestPayload']> = {
  correlationId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  test?: Resolver<ResolversTypes['Test'], ParentType, ContextType>;
};

export type SubscriptionResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Subscription'] = ResolversParentTypes['Subscription']> = {
  testChanges?: SubscriptionResolver<ResolversTypes['TestChange'], "testChanges", ParentType, ContextType>;
  testMessages?: SubscriptionResolver<ResolversTypes['TestMessage'], "testMessages", ParentType, ContextType, RequireFields<SubscriptionTestMessagesArgs, 'correlationId'>>;
};

export type TestResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Test'] = ResolversParentTypes['Test']> = {
  correlationId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  createdAt?: Resolver<ResolversTypes['DateTime'], ParentType, ContextType>;
  input?: Resolver<Maybe<ResolversTypes['JSON']>, ParentType, ContextType>;
  messageCount?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  messages?: Resolver<ResolversTypes['TestMessageConnection'], ParentType, ContextType, RequireFields<TestMessagesArgs, 'first'>>;
  status?: Resolver<ResolversTypes['TestStatus'], ParentType, ContextType>;
  updatedAt?: Resolver<ResolversTypes['DateTime'], ParentType, ContextType>;
};

export type TestChangeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestChange'] = ResolversParentTypes['TestChange']> = {
  kind?: Resolver<ResolversTypes['TestChangeKind'], ParentType, ContextType>;
  test?: Resolver<ResolversTypes['Test'], ParentType, ContextType>;
};

export type TestConnectionResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestConnection'] = ResolversParentTypes['TestConnection']> = {
  edges?: Resolver<Array<ResolversTypes['TestEdge']>, ParentType, ContextType>;
  nodes?: Resolver<Array<ResolversTypes['Test']>, ParentType, ContextType>;
  pageInfo?: Resolver<ResolversTypes['PageInfo'], ParentType, ContextType>;
  totalCount?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type TestEdgeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestEdge'] = ResolversParentTypes['TestEdge']> = {
  cursor?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  node?: Resolver<ResolversTypes['Test'], ParentType, ContextType>;
};

export type TestMessageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestMessage'] = ResolversParentTypes['TestMessage']> = {
  correlationId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  cursor?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  delivery?: Resolver<Maybe<ResolversTypes['DeliveryNote']>, ParentType, ContextType>;
  final?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  messageId?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  payload?: Resolver<Maybe<ResolversTypes['JSON']>, ParentType, ContextType>;
  producedAt?: Resolver<Maybe<ResolversTypes['DateTime']>, ParentType, ContextType>;
  receivedAt?: Resolver<ResolversTypes['DateTime'], ParentType, ContextType>;
  sequence?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  status?: Resolver<Maybe<ResolversTypes['TestStatus']>, ParentType, ContextType>;
};

export type TestMessageConnectionResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestMessageConnection'] = ResolversParentTypes['TestMessageConnection']> = {
  edges?: Resolver<Array<ResolversTypes['TestMessageEdge']>, ParentType, ContextType>;
  nodes?: Resolver<Array<ResolversTypes['TestMessage']>, ParentType, ContextType>;
  pageInfo?: Resolver<ResolversTypes['PageInfo'], ParentType, ContextType>;
  totalCount?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type TestMessageEdgeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TestMessageEdge'] = ResolversParentTypes['TestMessageEdge']> = {
  cursor?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  node?: Resolver<ResolversTypes['TestMessage'], ParentType, ContextType>;
};

export type Resolvers<ContextType = GraphQLContext> = {
  DateTime?: GraphQLScalarType;
  DeliveryNote?: DeliveryNoteResolvers<ContextType>;
  JSON?: GraphQLScalarType;
  Mutation?: MutationResolvers<ContextType>;
  PageInfo?: PageInfoResolvers<ContextType>;
  Query?: QueryResolvers<ContextType>;
  StartTestPayload?: StartTestPayloadResolvers<ContextType>;
  Subscription?: SubscriptionResolvers<ContextType>;
  Test?: TestResolvers<ContextType>;
  TestChange?: TestChangeResolvers<ContextType>;
  TestConnection?: TestConnectionResolvers<ContextType>;
  TestEdge?: TestEdgeResolvers<ContextType>;
  TestMessage?: TestMessageResolvers<ContextType>;
  TestMessageConnection?: TestMessageConnectionResolvers<ContextType>;
  TestMessageEdge?: TestMessageEdgeResolvers<ContextType>;
};

