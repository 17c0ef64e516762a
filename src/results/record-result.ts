/**
 * What the consumer does with each decoded message: store it, and push it live only when the store
 * took it as new, so a redelivered record is neither stored nor pushed twice.
 */
import type { ResultEventHandler } from '../ingest/kafka-result-consumer.js';
import type { PubSub } from '../pubsub/pubsub.js';
import type { Store } from '../store/store.js';

/** Creates the consumer's `onEvent` handler. */
export function createResultRecorder(options: { store: Store; pubsub: PubSub }): ResultEventHandler {
  return async (incoming) => {
    const result = await options.store.append(incoming);
    if (result.outcome === 'inserted' && result.published !== true) {
      await options.pubsub.publish({ message: result.message, status: result.status });
    }
    return result.outcome;
  };
}
