/** The listeners of each test in this process, and the delivery of an event to them. */
import type { TestMessageEvent } from '../domain/types.js';
import type { ServiceError } from '../base/errors.js';
import type { EventListener, ListenOptions, Realignment } from './follower-types.js';
import { holds, listOf, withOne, withoutOne, type OneOrSet } from '../base/one-or-set.js';

/** Listeners by correlation id. */
export interface TestListeners {
  /** Adds a listener; returns its removal (safe to call twice), and whether it is the test's first. */
  add(correlationId: string, listener: EventListener, options?: ListenOptions): { readonly remove: () => void; readonly first: boolean };
  /** Delivers `event` to every current listener of its test, synchronously, in the order added. */
  emit(correlationId: string, event: TestMessageEvent): void;
  /** The test left the store: removes every listener of it, then tells each (`ListenOptions.gone`) with `error`. */
  gone(correlationId: string, error: ServiceError): void;
  /** A failover lost writes of the test: tells every listener of it (`ListenOptions.realigned`). */
  realigned(correlationId: string, realignment: Realignment): void;
  /** Whether the test has listeners. */
  has(correlationId: string): boolean;
  /** Tests that have listeners: none lets an append skip its delivery pass (one lookup per message). */
  readonly size: number;
  clear(): void;
}

/**
 * Creates a {@link TestListeners}. `onLast` is called when the last listener of a test is removed
 * (the Redis log then stops listening to that test's channel).
 */
export function createTestListeners(onLast?: (correlationId: string) => void): TestListeners {
  // A test's one listener (the log's followed test, the usual case) is held without a set.
  const topics = new Map<string, OneOrSet<EventListener>>();
  // Only the listeners with options: every other is not told that its test went.
  const extras = new Map<EventListener, ListenOptions>();
  return {
    add(correlationId, listener, options) {
      if (options !== undefined) extras.set(listener, options);
      const listeners = topics.get(correlationId);
      const held = withOne(listeners, listener);
      if (held !== listeners) topics.set(correlationId, held);
      const remove = () => {
        extras.delete(listener);
        const current = topics.get(correlationId);
        if (!holds(current, listener)) return;
        if (withoutOne(current, listener) !== undefined) return;
        topics.delete(correlationId);
        onLast?.(correlationId);
      };
      return { remove, first: listeners === undefined };
    },
    emit(correlationId, event) {
      const listeners = topics.get(correlationId);
      if (listeners === undefined) return;
      if (!(listeners instanceof Set)) return listeners(event);
      // No copy per event (it would cost an array of every listener, per message): a listener that
      // removes itself while we iterate (its follower finished or paused) is simply not visited
      // again, which is how a Set's iteration treats deletion; none is added synchronously here.
      for (const listener of listeners) listener(event);
    },
    gone(correlationId, error) {
      const listeners = topics.get(correlationId);
      if (listeners === undefined) return;
      topics.delete(correlationId);
      onLast?.(correlationId);
      for (const listener of listOf(listeners)) {
        const told = extras.get(listener)?.gone;
        extras.delete(listener);
        told?.(error);
      }
    },
    realigned(correlationId, realignment) {
      for (const listener of listOf(topics.get(correlationId))) extras.get(listener)?.realigned?.(realignment);
    },
    has: (correlationId) => topics.has(correlationId),
    get size() {
      return topics.size;
    },
    clear: () => {
      topics.clear();
      extras.clear();
    },
  };
}
