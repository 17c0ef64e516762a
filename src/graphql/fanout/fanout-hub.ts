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
 * - the transport gets the subscription's end, `ended` (resolved when the source ends or the
 *   transport leaves, rejected when it fails), and `leave()` for a client that goes (its `complete`,
 *   a closed connection): no results pass through the transport, so there is nothing to iterate.
 *   Protocol libraries that learn an operation's end only by iterating it (graphql-ws) get that
 *   shape from `until-ended.ts`, made there alone; the streaming HTTP bindings wait on `ended`.
 */
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Logger } from '../../base/logger.js';
import { isFollower } from '../../log/follower.js';
import type { TestMessage } from '../../domain/types.js';
import type { Follower, SharingTarget } from '../../log/follower-types.js';
import type { EventObserver } from '../pipeline/operation-plugin.js';
import { notingSink, type DeliveryGrant } from './delivery-notes.js';
import type { PushSink, SharedResult, SubscriberSink } from './push-sink.js';
import { createSharedResults, sharedResult, type SharedResults } from './shared-results.js';

/**
 * One subscription in the hub, as its transport holds it: the hub writes its results to the
 * transport's sink (push-sink.ts), and the transport holds its end and its leaving here.
 */
export interface HubSubscription {
  /**
   * Settles once the subscription is over: resolves when it ends (its source ended, the test
   * finished, or the transport left), rejects with why it failed. A rejection nobody waits for is
   * not reported as unhandled.
   */
  readonly ended: Promise<void>;
  /** Starts the pushes (once the transport can write: after the response head, for SSE). Safe to call twice. */
  start(): void;
  /** The client left (its `complete`, a closed connection): the subscription leaves the hub and `ended` resolves. Safe to call twice. */
  leave(): void;
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
      return new HubSubscriber(hub, args, notingSink(transportSink, args, grant, sharedResult), opened[Symbol.asyncIterator]());
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

/**
 * One subscription in the hub: its follower's target (a sharing one: the log writes its live
 * messages in one pass with every other subscriber of the operation on the test, prepared once
 * here), and what its transport holds (`ended`, `leave`). One object with its methods shared, not
 * closures: one is made per subscription and held while it lasts (bench/README.md, "Idle memory").
 */
class HubSubscriber implements SharingTarget<SharedResult>, HubSubscription {
  /** The operation's key (`SharedResults.keyOf`): the share key of its follower's target. */
  readonly shareKey: string;
  readonly follower: Follower;
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;
  private rejectEnded!: (error: unknown) => void;
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
    this.ended = new Promise<void>((resolve, reject) => {
      this.resolveEnded = resolve;
      this.rejectEnded = reject;
    });
    this.ended.catch(ignore);
  }

  /** Starts the pushes; safe to call twice. */
  start(): void {
    if (this.started || this.left) return;
    this.started = true;
    if (this.counted) this.follower.push(this);
    else
      void pump(this.source, (event) => this.write(event), this.sink).then(
        () => this.end(),
        (error: unknown) => this.fail(error),
      );
  }

  /** The follower's target: a message while it replays or catches up (its group writes the live ones, `take`). */
  deliver(message: TestMessage, toCome?: number): boolean {
    return this.resumedWhenWritable(this.write(message, toCome));
  }

  /**
   * The subscription ended (its source did, or its test finished): it leaves the hub once the
   * results it still executes are written, so the last ones are not dropped and `ended` follows them.
   */
  end(): void {
    if (this.executing === 0) this.leave();
    else void this.behind.then(() => this.leave());
  }

  /** The subscription failed: it leaves the hub, and `ended` says why. */
  fail(error: unknown): void {
    if (this.left) return;
    this.rejectEnded(error);
    this.leave();
  }

  /** A live message, executed and serialized once for the `reached` subscribers of the operation its group writes it to. */
  prepare(message: TestMessage, reached: number): SharedResult | Promise<SharedResult> {
    return this.hub.results.get(message, this.args, this.shareKey, reached);
  }

  /** A live message from its group; when full, its follower catches up once the sink drains. */
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
      .catch((error: unknown) => this.fail(error))
      .finally(() => (this.executing -= 1));
    return true;
  }

  /** Leaves the hub once: stops its source and resolves `ended` (unless a failure settled it first). */
  leave(): void {
    if (this.left) return;
    this.left = true;
    this.resolveEnded();
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

function ignore(): void {}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

export type { SharedResult };
