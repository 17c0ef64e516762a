/**
 * What the consumer does with each chunk of decoded messages: store them with one `appendMany`
 * (one script call for the Redis store, one synchronous pass for the memory store), and push each
 * live only when the store took it as new, so a redelivered record is neither stored nor pushed twice.
 */
import type { AppendResult } from '../domain/types.js';
import type { ResultEventHandler } from '../ingest/consumer.js';
import type { PubSub } from '../pubsub/pubsub.js';
import type { Store } from '../store/store.js';

/** Creates the consumer's `onEvents` handler. */
export function createResultRecorder(options: { store: Store; pubsub: PubSub }): ResultEventHandler {
  const { store, pubsub } = options;
  return async (messages) => {
    if (messages.length === 0) return [];
    // If the store fails, the chunk fails with its error: the consumer hands it over again, and
    // appends are idempotent.
    const results = await store.appendMany(messages);
    const outcomes = new Array<AppendResult['outcome']>(results.length);
    let pushes: Array<Promise<void>> | undefined;
    for (let i = 0; i < results.length; i++) {
      const result = results[i] as AppendResult;
      outcomes[i] = result.outcome;
      // Issued in chunk order, so each test's subscribers see its messages in order.
      if (result.outcome === 'inserted' && result.published !== true) (pushes ??= []).push(pubsub.publish({ message: result.message, status: result.status }));
    }
    if (pushes !== undefined) {
      // Every push is done (or failed) before the chunk counts as stored. A failed push fails the
      // chunk, after the others were pushed: its records are redelivered and found already stored.
      const settled = await Promise.allSettled(pushes);
      const failed = settled.find((push): push is PromiseRejectedResult => push.status === 'rejected');
      if (failed !== undefined) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
    return outcomes;
  };
}
