/** In-process {@link PubSub}: synchronous fan-out to the listeners of one correlation id. */
import type { TestMessageEvent } from '../domain/types.js';
import type { EventListener, PubSub } from './pubsub.js';

/** Creates an in-memory {@link PubSub}; `listenerCount` is exposed for metrics and tests. */
export function createMemoryPubSub(): PubSub & { listenerCount(correlationId?: string): number } {
  const topics = new Map<string, Set<EventListener>>();

  return {
    async publish(event: TestMessageEvent) {
      const listeners = topics.get(event.message.correlationId);
      if (listeners === undefined) return;
      // Copy first: a listener may unsubscribe (complete) while we iterate.
      for (const listener of [...listeners]) listener(event);
    },

    async subscribe(correlationId, listener) {
      let listeners = topics.get(correlationId);
      if (listeners === undefined) {
        listeners = new Set();
        topics.set(correlationId, listeners);
      }
      listeners.add(listener);
      return () => {
        const current = topics.get(correlationId);
        if (current === undefined) return;
        current.delete(listener);
        if (current.size === 0) topics.delete(correlationId);
      };
    },

    listenerCount(correlationId) {
      if (correlationId !== undefined) return topics.get(correlationId)?.size ?? 0;
      let total = 0;
      for (const set of topics.values()) total += set.size;
      return total;
    },

    async dispose() {
      topics.clear();
    },
  };
}
