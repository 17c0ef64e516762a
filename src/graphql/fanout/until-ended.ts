/**
 * graphql-ws learns that an operation is over, and ends one, only through the async iterator its
 * `subscribe` returns: it sends `complete` when the iterator is done and `error` when it throws,
 * and calls `return()` when the client sends `complete` or the socket closes. A subscription of
 * the hub gives the protocol server no results (the hub writes them to the socket itself), only
 * its end; this is the one place that end is made into that shape: an iterator whose `next()`
 * settles when the subscription is over, and whose `return()` is the client leaving.
 *
 * One object with its methods shared, not closures: one is made per subscription and held while it
 * lasts (bench/README.md, "Idle memory").
 */
import type { ExecutionResult } from 'graphql';
import type { HubSubscription } from './fanout-hub.js';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/** The iterator graphql-ws waits on for `subscription`; see the file header. */
export function untilEnded(subscription: Pick<HubSubscription, 'ended' | 'leave'>): AsyncGenerator<ExecutionResult, undefined> {
  return new UntilEnded(subscription);
}

class UntilEnded implements AsyncGenerator<ExecutionResult, undefined> {
  constructor(private readonly subscription: Pick<HubSubscription, 'ended' | 'leave'>) {}

  next(): Promise<IteratorResult<ExecutionResult, undefined>> {
    return this.subscription.ended.then(() => DONE);
  }

  return(): Promise<IteratorResult<ExecutionResult, undefined>> {
    this.subscription.leave();
    return Promise.resolve(DONE);
  }

  throw(error?: unknown): Promise<IteratorResult<ExecutionResult, undefined>> {
    this.subscription.leave();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.subscription.leave();
  }
}
