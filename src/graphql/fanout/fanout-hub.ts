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
import { createChannel, type Channel } from '../../base/channel.js';
import type { Logger } from '../../base/logger.js';
import { isFollower } from '../../log/follower.js';
import type { TestMessage } from '../../domain/types.js';
import type { Follower, SharingTarget } from '../../log/follower-types.js';
import type { EventObserver } from '../pipeline/operation-plugin.js';
import { notingSink, type DeliveryGrant } from './delivery-notes.js';
import type { PushSink, SharedResult, SubscriberSink } from './push-sink.js';
import { createSharedResults, sharedResult, type SharedResults } from './shared-results.js';

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
  const hub: HubState = {
    results: createSharedResults(options.observeEvent),
    followers: 0,
    closeFailed: (error: unknown) => options.logger.error({ err: error }, 'a subscription source failed to close'),
  };

  return {
    get followers() {
      return hub.followers;
    },
    async subscribe(args, transportSink, grant) {
      const opened = await createSourceEventStream(args);
      if (!isAsyncIterable(opened)) return opened;
      const subscriber = new HubSubscriber(hub, args, notingSink(transportSink, args, grant, sharedResult), opened[Symbol.asyncIterator]());
      return { stream: subscriber.outcome.iterator, start: () => subscriber.start() };
    },
  };
}

/** What every subscriber of one hub shares. */
interface HubState {
  readonly results: SharedResults;
  /** Subscriptions of `testMessages` open now. */
  followers: number;
  readonly closeFailed: (error: unknown) => void;
}

const nothingQueued = () => new Error('nothing is queued here');

/**
 * One subscription in the hub: its follower's target (a sharing one: the log writes its live
 * messages in one pass with every other subscriber of the operation on the test, prepared once
 * here), and the stream its transport waits on (`outcome`). One object with its methods shared, not closures: one is made per
 * subscription and held while it lasts (bench/README.md, "Idle memory").
 */
class HubSubscriber implements SharingTarget<SharedResult> {
  /** The operation's key (`SharedResults.keyOf`): the share key of its follower's target. */
  readonly shareKey: string;
  readonly follower: Follower;
  /** Never pushed to: it ends, fails, or is left by the protocol server (onClose: the subscriber leaves). */
  readonly outcome: Channel<ExecutionResult>;
  private readonly counted: boolean;
  private left = false;
  private started = false;
  /** A result still being executed (a selection that reads the store) holds back the subscriber's later ones, so they leave in order. */
  private behind: Promise<void> = Promise.resolve();
  private executing = 0;

  constructor(
    private readonly hub: HubState,
    readonly args: ExecutionArgs,
    readonly sink: SubscriberSink,
    private readonly source: AsyncIterator<unknown>,
  ) {
    this.shareKey = hub.results.keyOf(args);
    this.counted = isFollower(source);
    // Only read when its source is a follower.
    this.follower = source as Follower;
    if (this.counted) hub.followers += 1;
    this.outcome = createChannel<ExecutionResult>({ limit: 0, overflow: nothingQueued, onClose: () => this.leave() });
  }

  /** Starts the pushes; safe to call twice. */
  start(): void {
    if (this.started || this.left) return;
    this.started = true;
    if (this.counted) this.follower.push(this);
    else
      void pump(this.source, (event) => this.write(event), this.sink).then(
        () => this.outcome.end(),
        (error: unknown) => this.outcome.fail(error),
      );
  }

  /** The follower's target: a message while it replays or catches up (its pass writes the live ones, `take`). */
  deliver(message: TestMessage, toCome?: number): boolean {
    return this.resumedWhenWritable(this.write(message, toCome));
  }

  end(): void {
    this.outcome.end();
  }

  fail(error: unknown): void {
    this.outcome.fail(error);
  }

  /** A live message, executed and serialized once for the `reached` subscribers of the operation its pass writes it to. */
  prepare(message: TestMessage, reached: number): SharedResult | Promise<SharedResult> {
    return this.hub.results.get(message, this.args, this.shareKey, reached);
  }

  /** A live message from its pass; when full, its follower catches up once the sink drains. */
  take(shared: SharedResult): boolean {
    return this.resumedWhenWritable(this.send(shared));
  }

  /** What a write answered; when the sink is full, the follower is resumed once it drains (it catches up from the store). */
  private resumedWhenWritable(written: boolean): boolean {
    if (!written) this.sink.whenWritable(() => this.follower.resume());
    return written;
  }

  private write(event: unknown, toCome?: number): boolean {
    if (this.left) return true;
    return this.send(this.hub.results.get(event, this.args, this.shareKey), toCome);
  }

  /** Writes a result, after any of its own still executing (a catch-up's result that reads the store), so they leave in order. */
  private send(shared: SharedResult | Promise<SharedResult>, toCome?: number): boolean {
    if (!(shared instanceof Promise) && this.executing === 0) return this.sink.write(shared, toCome);
    this.executing += 1;
    this.behind = this.behind
      .then(async () => {
        const settled = await shared;
        if (!this.left) this.sink.write(settled, toCome);
      })
      .catch((error: unknown) => this.outcome.fail(error))
      .finally(() => (this.executing -= 1));
    return true;
  }

  private leave(): void {
    if (this.left) return;
    this.left = true;
    if (this.counted) this.hub.followers -= 1;
    Promise.resolve(this.source.return?.()).catch(this.hub.closeFailed);
  }
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
