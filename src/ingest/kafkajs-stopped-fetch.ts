/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: a consumer stopped while its
 * fetchers were being rebuilt (the brokers it fetches from changed: a Kafka node died or came back
 * at that moment) can spin forever. Its fetch manager, after a `KafkaJSFetcherRebalanceError`,
 * stops the old fetchers and creates new ones without asking whether the consumer still runs; the
 * runner's `fetch` then answers each of them `[]` at once, as a stopped consumer's fetch does, and
 * the fetchers loop on it in the microtask queue without ever yielding. No timer fires again: the
 * process cannot finish its shutdown nor exit on its `SHUTDOWN_TIMEOUT_MS`, and serves nothing
 * (a chaos run found a consumer replica wedged at 25 % CPU for 13 minutes after a SIGTERM that
 * came with a Kafka node's death). This makes a stopped runner's fetch stop every fetcher of its
 * fetch manager before it answers `[]`, so their loops end and the fetch manager returns, as on an
 * ordinary stop. Importing the module applies it, once; on any other kafkajs release it changes
 * nothing (test/unit/ingest/kafkajs-stopped-fetch.test.ts then fails, so the next upgrade looks at
 * it again).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

/** What this patch touches of kafkajs's consumer runner (its `Runner` class). */
interface Runner {
  running: boolean;
  fetchManager: { getFetchers(): Array<{ stop(): Promise<void> }> };
  fetch(nodeId: number): Promise<unknown[]>;
}

/** True when the installed kafkajs's runner has the stopped-fetch fix. */
export const kafkajsStoppedFetchPatched = kafkajsIsPatchedRelease;

if (kafkajsStoppedFetchPatched) {
  const Runner = requireKafkajsModule<{ prototype: Runner }>('kafkajs/src/consumer/runner.js');
  const fetch = Runner.prototype.fetch;
  Runner.prototype.fetch = function stoppedAwareFetch(this: Runner, nodeId: number) {
    if (!this.running) {
      // Not awaited: a fetcher's stop waits for its loop to end, which this very fetch is part of.
      // It marks the fetcher stopped at once, so its loop ends when this `[]` reaches it.
      for (const fetcher of this.fetchManager.getFetchers()) void fetcher.stop();
    }
    return fetch.call(this, nodeId);
  };
}
