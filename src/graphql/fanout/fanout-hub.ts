/**
 * The fan-out hub: how a subscription event reaches every subscriber of it, on WebSocket and SSE
 * alike. graphql-ws and graphql-sse stay the protocol servers (handshake, subscribe, complete,
 * errors, pings); what they would do per subscriber and per event (await `onNext`, spread and
 * stringify the message, await each send, one chain of async iterators per subscriber) is done
 * here once per event and operation, and the pushes leave through each subscriber's sink in one
 * synchronous pass:
 *
 * - the subscription's source stream is opened as graphql-js opens it (`createSourceEventStream`:
 *   arguments, the subscribe resolver, its refusals);
 * - a source that is a `Follower` (a `testMessages` stream) is pushed to: every stored message is
 *   handed to the hub in the same call that announces it, to all the test's subscribers in turn;
 *   each event is executed and serialized once per operation (`shared-results.ts`), and each sink
 *   writes its frame without a promise, an iterator or a `JSON.stringify` of its own;
 * - a subscriber whose sink is full (its socket over its high-water mark) pauses: its follower stops
 *   listening and holds nothing, and when the sink can take more it catches up from the store and
 *   rejoins the live pushes, missing nothing and getting nothing twice (`follower.ts`);
 * - any other source (the change feed) is read as an iterator, one subscriber at a time, and its
 *   results leave through the same sinks;
 * - the transport gets a stream that yields nothing (graphql-ws and graphql-sse wait on it), ends
 *   when the source ends (they then send `complete`), fails when it fails (they send the error
 *   through the lifecycle's edge), and leaves the hub when they `return()` it (a client's `complete`,
 *   a closed socket).
 */
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { createChannel } from '../../base/channel.js';
import type { Logger } from '../../base/logger.js';
import { isFollower } from '../../log/follower.js';
import type { EventObserver } from '../pipeline/operation-plugin.js';
import { notingSink, type DeliveryGrant } from './delivery-notes.js';
import type { PushSink, SharedResult, SubscriberSink } from './push-sink.js';
import { createFollowerGroups, type GroupMember } from './follower-groups.js';
import { createSharedResults, sharedResult } from './shared-results.js';

/** One subscription in the hub, as its transport holds it. */
export interface HubSubscription {
  /** What the protocol server iterates: it yields nothing, ends when the subscription ends, fails when it fails. */
  readonly stream: AsyncIterableIterator<ExecutionResult>;
  /** Starts the pushes (once the transport can write: after the response head, for SSE). Safe to call twice. */
  start(): void;
}

/** The hub of one process. */
export interface FanoutHub {
  /**
   * Opens the subscription of `args` and pushes its results to `sink` once started; a subscription
   * refused as it opens (an unknown test, one the caller may not see) is answered as a result.
   * `grant`: the delivery guarantee it was granted, which its first push confirms (delivery-notes.ts).
   */
  subscribe(args: ExecutionArgs, transportSink: PushSink, grant?: DeliveryGrant): Promise<HubSubscription | ExecutionResult>;
  /** Subscriptions of `testMessages` open now, live or paused (a paused one follows no test until it catches up). */
  readonly followers: number;
}

/** Options of {@link createFanoutHub}. */
export interface FanoutHubOptions {
  /** Gets the failures of sources that could not be closed when their subscriber left. */
  readonly logger: Logger;
  /** The plugins' observers of an event (the lifecycle's `observeEvent`); none when absent. */
  readonly observeEvent?: (event: unknown) => EventObserver | undefined;
}

/** Creates the hub. */
export function createFanoutHub(options: FanoutHubOptions): FanoutHub {
  const results = createSharedResults(options.observeEvent);
  const groups = createFollowerGroups(results, (error) => options.logger.error({ err: error }, 'a group of subscribers could not listen to its test'));
  const closeFailed = (error: unknown) => options.logger.error({ err: error }, 'a subscription source failed to close');
  let followers = 0;

  return {
    get followers() {
      return followers;
    },
    async subscribe(args, transportSink, grant) {
      const opened = await createSourceEventStream(args);
      if (!isAsyncIterable(opened)) return opened;
      const sink = notingSink(transportSink, args, grant, sharedResult);
      const source = opened[Symbol.asyncIterator]();
      const key = results.keyOf(args);
      const counted = isFollower(source);
      if (counted) followers += 1;
      let member: GroupMember | undefined;
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        if (counted) followers -= 1;
        if (member !== undefined) groups.leave(member);
        Promise.resolve(source.return?.()).catch(closeFailed);
      };
      // Never pushed to: it ends, fails, or is left by the protocol server (onClose: the subscriber leaves).
      const outcome = createChannel<ExecutionResult>({ limit: 0, overflow: () => new Error('nothing is queued here'), onClose: leave });
      // A result still being executed (a selection that reads the store) holds back the subscriber's
      // later ones, so they leave in order.
      let behind: Promise<void> = Promise.resolve();
      let executing = 0;
      const write = (event: unknown, toCome?: number): boolean => {
        if (left) return true;
        const shared = results.get(event, args, key);
        if (!(shared instanceof Promise) && executing === 0) return sink.write(shared, toCome);
        executing += 1;
        behind = behind
          .then(async () => {
            const settled = await shared;
            if (!left) sink.write(settled, toCome);
          })
          .catch((error: unknown) => outcome.fail(error))
          .finally(() => (executing -= 1));
        return true;
      };
      let started = false;
      const start = () => {
        if (started || left) return;
        started = true;
        if (isFollower(source)) {
          member = { follower: source, args, key, sink, end: () => outcome.end(), fail: (error) => outcome.fail(error) };
          pushFollower(member, write, outcome, () => groups.live(member as GroupMember));
        } else
          void pump(source, write, sink).then(
            () => outcome.end(),
            (error: unknown) => outcome.fail(error),
          );
      };
      return { stream: outcome.iterator, start };
    },
  };
}

/**
 * Pushes a follower's messages through `write` while it replays or catches up (it pauses when the
 * sink is full and resumes once it drains); once it is live, its group takes its live messages over.
 */
function pushFollower(
  member: GroupMember,
  write: (event: unknown, toCome?: number) => boolean,
  outcome: { end(): void; fail(error: unknown): void },
  live: () => void,
): void {
  const { follower, sink } = member;
  follower.push({
    deliver(message, toCome) {
      if (write(message, toCome)) return true;
      sink.whenWritable(() => follower.resume());
      return false;
    },
    end: () => outcome.end(),
    fail: (error) => outcome.fail(error),
    live,
  });
}

/** Reads any other source one event at a time, waiting for the sink whenever it is full. */
async function pump(source: AsyncIterator<unknown>, write: (event: unknown) => boolean, sink: SubscriberSink): Promise<void> {
  for (let next = await source.next(); next.done !== true; next = await source.next()) {
    if (!write(next.value)) await new Promise<void>((resume) => sink.whenWritable(resume));
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

export type { SharedResult };
