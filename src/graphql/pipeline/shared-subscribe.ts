/**
 * Subscription execution shared between subscribers. graphql-js `subscribe` runs the whole
 * execution of the selection for every event and every subscriber: a test followed by 5,000
 * dashboards would execute the same selection on the same message 5,000 times. Here each event is
 * executed once per distinct operation (document, operation name and variables) and the result is
 * handed to every subscriber that asked for that operation.
 *
 * This is sound because what a subscription event resolves to depends only on the operation and
 * the event: the fields under `testMessages` are pure functions of the stored message and never
 * read the caller's context (who may see the test is decided once, when the stream is opened).
 * Under `testChanges`, who may see the test is decided per change before it reaches a subscriber,
 * and `Test.messages` reads the test from the log, the same for every subscriber it reaches.
 * A field that reads the context must not be added below a subscription root without dropping
 * this sharing for it.
 *
 * Results are kept only until the event loop turns: the subscribers woken by one event all run in
 * the same turn, and a subscriber that falls behind simply executes its late event itself.
 *
 * The lifecycle's plugins may follow an event (`onEvent`: the push-tracing plugin's span) from its
 * first execution until that turn ends, by when the frames for every subscriber it reached are
 * written; each subscriber it reaches is counted.
 */
import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Logger } from '../../base/logger.js';
import type { EventObserver } from './operation-plugin.js';

type Execution = ExecutionResult | Promise<ExecutionResult>;

/**
 * A `subscribe` implementation for graphql-ws and graphql-sse (their `subscribe` server option).
 * `onEvent` sees each source event just before the result it executes to is yielded (the SSE
 * binding names its events after them).
 */
export type SharedSubscribe = (args: ExecutionArgs, onEvent?: (event: unknown) => void) => Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult>;

/** Options of {@link createSharedSubscribe}. */
export interface SharedSubscribeOptions {
  /** Gets the failures of sources that could not be closed when their subscriber left. */
  readonly logger: Logger;
  /** The plugins' observers of an event (the lifecycle's `observeEvent`, which guards each plugin's); none when absent. */
  readonly observeEvent?: (event: unknown) => EventObserver | undefined;
}

/** Creates a {@link SharedSubscribe} with its own per-turn result cache. */
export function createSharedSubscribe(options: SharedSubscribeOptions): SharedSubscribe {
  const observeEvent = options.observeEvent ?? (() => undefined);
  // event -> operation key -> result, for the current turn of the event loop only.
  const results = new Map<unknown, Map<string, Execution>>();
  // Observers of this turn's events, by event.
  const pushes = new Map<unknown, EventObserver>();
  let clearing = false;
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;

  const operationKey = (args: ExecutionArgs): string => {
    // Documents are compared by identity: the pipeline's parse cache hands equal queries the same
    // parsed document, so identity is as good as text here and much cheaper.
    let documentId = documentIds.get(args.document);
    if (documentId === undefined) {
      documentId = nextDocumentId++;
      documentIds.set(args.document, documentId);
    }
    return `${documentId}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? null)}`;
  };

  // The turn is over: forget its results, then end its observers (the lifecycle's, which report
  // their own failures). Cleared first: nothing an observer does can keep this turn's results.
  const endTurn = () => {
    results.clear();
    clearing = false;
    if (pushes.size === 0) return;
    const ended = [...pushes.values()];
    pushes.clear();
    for (const push of ended) push.end();
  };

  const executeShared = (event: unknown, args: ExecutionArgs, key: string): Execution => {
    let perEvent = results.get(event);
    if (perEvent === undefined) {
      perEvent = new Map();
      results.set(event, perEvent);
      if (!clearing) {
        clearing = true;
        setImmediate(endTurn);
      }
      const push = observeEvent(event);
      if (push !== undefined) pushes.set(event, push);
    }
    if (pushes.size > 0) pushes.get(event)?.reached();
    let result = perEvent.get(key);
    if (result === undefined) {
      result = execute({ ...args, rootValue: event });
      perEvent.set(key, result);
    }
    return result;
  };

  return async (args, onEvent) => {
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source;
    const key = operationKey(args);
    return mapIterator(
      source,
      (event) => {
        onEvent?.(event);
        return executeShared(event, args, key);
      },
      (error) => options.logger.error({ err: error }, 'a subscription source failed to close'),
    );
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/**
 * Maps an async iterable, passing `return` and `throw` through so the source is always closed. A
 * source whose `return` fails is reported to `closeFailed`, not thrown at the subscriber that is
 * leaving: graphql-ws would close the socket, and every other operation on it, for it.
 */
function mapIterator<T, U>(source: AsyncIterable<T>, map: (value: T) => U | Promise<U>, closeFailed: (error: unknown) => void): AsyncIterableIterator<U> {
  const iterator = source[Symbol.asyncIterator]();
  const mapResult = async (result: IteratorResult<T>): Promise<IteratorResult<U>> => {
    if (result.done === true) return { value: undefined, done: true };
    try {
      return { value: await map(result.value), done: false };
    } catch (error) {
      await iterator.return?.();
      throw error;
    }
  };
  const mapped: AsyncIterableIterator<U> = {
    next: async () => mapResult(await iterator.next()),
    return: async () => {
      if (iterator.return === undefined) return { value: undefined, done: true };
      let result: IteratorResult<T>;
      try {
        result = await iterator.return();
      } catch (error) {
        closeFailed(error);
        return { value: undefined, done: true };
      }
      return mapResult(result);
    },
    throw: async (error?: unknown) => {
      if (iterator.throw !== undefined) return mapResult(await iterator.throw(error));
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]: () => mapped,
  };
  return mapped;
}
