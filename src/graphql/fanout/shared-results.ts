/**
 * One execution per event and distinct operation, for every subscriber of it. graphql-js
 * `subscribe` runs the whole execution of the selection for every event and every subscriber: a
 * test followed by 5,000 dashboards would execute the same selection on the same message 5,000
 * times, and serialize the same result 5,000 times. Here each event is executed once per distinct
 * operation (document, operation name and variables), serialized once, and the same
 * {@link SharedResult} is handed to every subscriber of that operation.
 *
 * This is sound because what a subscription event resolves to depends only on the operation and
 * the event: the fields under `testMessages` are pure functions of the stored message and never
 * read the caller's context (who may see the test is decided once, when the stream is opened).
 * Under `testChanges`, who may see the test is decided per change before it reaches a subscriber,
 * and `Test.messages` reads the test from the log, the same for every subscriber it reaches.
 * A field that reads the context must not be added below a subscription root without dropping
 * this sharing for it.
 *
 * A push of an operation that reads only its message's own fields is answered by its plan
 * (`plain-execution.ts`) instead of graphql-js's `execute`, with the same result.
 *
 * Results are kept only for the event being delivered: the log hands a stored message to every
 * subscriber it reaches in one synchronous pass before it hands on the next, so the last event's
 * results are all the sharing needs, and a subscriber that asks for an earlier event (one catching
 * up) simply executes it again. Kept until the end of the turn, every result of a broker batch
 * (its text and bytes too) was alive at any collection during it, and was copied out of the young
 * generation with the stored messages: with one follower a test, three times what a push keeps
 * (bench/README.md, "What outlives the young generation"). The lifecycle's plugins may follow an
 * event (`onEvent`: the push-tracing plugin's span) from its first execution until the turn ends;
 * each subscriber it reaches is counted.
 */
import { type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { EventObserver } from '../pipeline/operation-plugin.js';
import { stringifyWithText } from '../../domain/json-text.js';
import { executeEvent } from './plain-execution.js';
import type { SharedResult } from './push-sink.js';

/** The results of the event being delivered, by operation. */
export interface SharedResults {
  /** The key of an operation: equal for subscribers whose results are equal for every event. */
  keyOf(args: ExecutionArgs): string;
  /**
   * The result of `event` for the operation of `args` (key `key`), for `reached` more subscribers
   * (1 by default): executed once for as long as the same event is asked for in a row.
   */
  get(event: unknown, args: ExecutionArgs, key: string, reached?: number): SharedResult | Promise<SharedResult>;
}

/**
 * One event's results, by operation key: the first operation's held inline, the others
 * in a map made for a second one. With one follower a test an event has one operation, and a map
 * an event was among the largest allocations of a push (bench/README.md, "What a push allocates").
 */
interface EventResults {
  key: string | undefined;
  first: SharedResult | Promise<SharedResult> | undefined;
  others: Map<string, SharedResult | Promise<SharedResult>> | undefined;
}

let nextHubId = 0;

/** Creates the shared results of one hub; `observeEvent` is the lifecycle's (its plugins' observers of an event, as one). */
export function createSharedResults(observeEvent: (event: unknown) => EventObserver | undefined = () => undefined): SharedResults {
  // The event being delivered, and its results by operation key.
  let current: unknown = undefined;
  let results: EventResults | undefined;
  // Observers of this turn's events, by event.
  const pushes = new Map<unknown, EventObserver>();
  let clearing = false;
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
  // The log's groups are per log, and two hubs may share one log (replicas in one process): a key
  // names its hub too, so that one hub's document numbers never meet another's.
  const hubId = nextHubId++;

  // The turn is over: forget its results, then end its observers (the lifecycle's, which report
  // their own failures). Cleared first: nothing an observer does can keep this turn's results.
  const endTurn = () => {
    current = results = undefined;
    clearing = false;
    if (pushes.size === 0) return;
    const ended = [...pushes.values()];
    pushes.clear();
    for (const push of ended) push.end();
  };

  return {
    keyOf(args) {
      // Documents are compared by identity: the document-caching plugin hands equal queries the
      // same parsed document, so identity is as good as text here and much cheaper.
      let documentId = documentIds.get(args.document);
      if (documentId === undefined) {
        documentId = nextDocumentId++;
        documentIds.set(args.document, documentId);
      }
      // Joined rather than concatenated: a concatenation is a tree of string pieces (seven here, 32
      // bytes each), and each subscriber holds its key for as long as it lasts; a join is one string.
      return [`${hubId}:${documentId}`, args.operationName ?? '', JSON.stringify(args.variableValues ?? null)].join('\u0000');
    },
    get(event, args, key, reached = 1) {
      let perEvent = current === event ? results : undefined;
      if (perEvent === undefined) {
        // The previous event's results are let go: whoever still writes them holds them itself.
        perEvent = results = { key: undefined, first: undefined, others: undefined };
        current = event;
        if (!clearing) {
          clearing = true;
          setImmediate(endTurn);
        }
        // Once a turn per event, however often it comes back in it.
        if (!pushes.has(event)) {
          const push = observeEvent(event);
          if (push !== undefined) pushes.set(event, push);
        }
      }
      if (pushes.size > 0) {
        const push = pushes.get(event);
        for (let i = 0; i < reached; i++) push?.reached();
      }
      let shared = perEvent.key === key ? perEvent.first : perEvent.others?.get(key);
      if (shared === undefined) {
        const result = executeEvent(args, event);
        shared = result instanceof Promise ? result.then((settled) => sharedResult(event, settled)) : sharedResult(event, result);
        if (perEvent.key === undefined) {
          perEvent.key = key;
          perEvent.first = shared;
        } else (perEvent.others ??= new Map()).set(key, shared);
      }
      return shared;
    },
  };
}

/** A result with its bytes and shared values made on first use. */
export function sharedResult(event: unknown, result: ExecutionResult): SharedResult {
  return new LazySharedResult(event, result);
}

/**
 * {@link sharedResult}'s result, built by a constructor against the project's rule of factories:
 * one is made for every push (with one follower a test, for every subscriber), and an object with
 * its methods on a shared prototype, its table of shared values made only when a transport asks
 * for one (SSE does, graphql-ws does not), is one allocation where closures and an eager `Map`
 * were four (bench/README.md, "A push's shared result").
 */
class LazySharedResult implements SharedResult {
  private made: Buffer | undefined = undefined;
  private values: Map<symbol, unknown> | undefined = undefined;

  constructor(
    readonly event: unknown,
    readonly result: ExecutionResult,
  ) {}

  // A stored payload's text in the result is copied as it is rather than parsed and serialized again.
  bytes(): Buffer {
    return (this.made ??= Buffer.from(stringifyWithText(this.result)));
  }

  shared<T>(key: symbol, make: () => T): T {
    const values = (this.values ??= new Map());
    if (!values.has(key)) values.set(key, make());
    return values.get(key) as T;
  }
}
