/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
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

export type FollowTestSubscriptionVariables = Exact<{
  id: string;
  after?: string | null | undefined;
}>;


export type FollowTestSubscription = { testMessages: { id: string, cursor: string, sequence: number | null, status: TestStatus | null, final: boolean, payload: unknown, producedAt: string | null, receivedAt: string } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const FollowTestDocument = new TypedDocumentString(`
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
    `) as unknown as TypedDocumentString<FollowTestSubscription, FollowTestSubscriptionVariables>;