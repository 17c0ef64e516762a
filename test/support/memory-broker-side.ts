/**
 * A broker side without a broker, for the pipeline's tests (the `BrokerSide` seam of
 * src/ingest/broker-side.ts): start requests are kept in order instead of published, and results
 * are delivered by the test through the very handler the service gave its consumer
 * (`record-result`), as a consumer hands it a batch. The consumer is joined from its start and
 * fetches nothing by itself.
 */
import type { IncomingMessage } from '../../src/domain/types.js';
import type { BrokerHandlers, BrokerSide } from '../../src/ingest/broker-side.js';
import type { ConsumerActivity, ConsumerState, ResultConsumer } from '../../src/ingest/consumer.js';
import { createIngestDelays } from '../../src/ingest/ingest-delays.js';
import type { TestRequest } from '../../src/ingest/request-publisher.js';
import { ServiceError } from '../../src/base/errors.js';

/** The broker side, and the test's hands on it. */
export interface MemoryBrokerSide extends BrokerSide {
  /** Start requests the service published, in order. */
  readonly published: readonly TestRequest[];
  /** Hands one batch to the service's result handler, as its consumer would; the outcome of each message. */
  deliver(messages: readonly IncomingMessage[]): Promise<readonly string[]>;
  /**
   * Fails the next publish with BROKER_UNAVAILABLE: `refused`, the request is not kept; `unconfirmed`,
   * it is (the broker took it, its answer was lost: a timeout is no proof it did not go out).
   */
  failNext(how: 'refused' | 'unconfirmed'): void;
}

/** Builds the broker side around the service's handlers (pass as `createBrokerSide`). */
export function createMemoryBrokerSide(handlers: BrokerHandlers): MemoryBrokerSide {
  const published: TestRequest[] = [];
  let failing: 'refused' | 'unconfirmed' | undefined;
  const since = Date.now();
  let state: ConsumerState['state'] = 'idle';
  const delays = createIngestDelays();
  const activity = (): ConsumerActivity => ({
    lastFetchAt: undefined,
    secondsSinceFetch: (Date.now() - since) / 1000,
    joinedOnce: state !== 'idle',
    entered: { idle: 1, connecting: 0, joined: state === 'idle' ? 0 : 1, stalled: 0, rebalancing: 0, crashed: 0, stopped: state === 'stopped' ? 1 : 0 },
  });
  const consumer: ResultConsumer = {
    start: () => void (state = 'joined'),
    state: () => ({ state, since }),
    activity,
    stats: { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 },
    lag: () => [],
    delays: () => delays.snapshot(),
    dispose: async () => void (state = 'stopped'),
  };
  return {
    consumer,
    publisher: {
      start() {},
      publish: async (request) => {
        const how = failing;
        failing = undefined;
        if (how !== 'refused') published.push(request);
        if (how !== undefined) throw new ServiceError('BROKER_UNAVAILABLE', 'The message broker did not confirm the request (a fault the test made).');
      },
      dispose: async () => {},
    },
    published,
    failNext: (how) => void (failing = how),
    deliver: (messages) => handlers.onEvents(messages),
    dispose: () => consumer.dispose(),
  };
}
