/**
 * What the consumer does with each decoded message: store it, and push it live only when the store
 * took it as new, so a redelivered record is neither stored nor pushed twice.
 *
 * The consumer hands over a chunk of records at once (one `onEvent` each, without waiting): the
 * messages that arrive in the same tick are stored together with one `appendMany`, which the Redis
 * store turns into one script call instead of one per record.
 */
import DataLoader from 'dataloader';
import type { AppendResult, IncomingMessage } from '../domain/types.js';
import type { ResultEventHandler } from '../ingest/consumer.js';
import type { PubSub } from '../pubsub/pubsub.js';
import type { Store } from '../store/store.js';

/** Most messages stored in one call; more in the same tick are split into several batches. */
const MAX_BATCH = 500;

/** Creates the consumer's `onEvent` handler. */
export function createResultRecorder(options: { store: Store; pubsub: PubSub }): ResultEventHandler {
  const { store, pubsub } = options;
  // A write loader: every message is stored, so nothing is cached. If the store fails, every
  // message of the batch fails with its error (the consumer retries the chunk; appends are idempotent).
  const writes = new DataLoader<IncomingMessage, AppendResult['outcome']>(
    async (batch) => {
      const results = await store.appendMany(batch);
      // The pushes are issued in batch order (so each test's subscribers see its messages in order)
      // and all done before any message of the batch is reported stored.
      const pushes = await Promise.allSettled(
        results.map((result) =>
          result.outcome === 'inserted' && result.published !== true ? pubsub.publish({ message: result.message, status: result.status }) : undefined,
        ),
      );
      // A failed push fails its own message only, as it would have without batching.
      return results.map((result, i) => {
        const push = pushes[i];
        if (push?.status !== 'rejected') return result.outcome;
        return push.reason instanceof Error ? push.reason : new Error(String(push.reason));
      });
    },
    { cache: false, maxBatchSize: MAX_BATCH },
  );
  return (incoming) => writes.load(incoming);
}
