/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: its request queue schedules the
 * check of pending requests at `throttledUntil - Date.now()`, a large negative number whenever the
 * broker is not throttling the client (tulios/kafkajs#1751). Node has always run such a timer after
 * 1 ms; from Node 24 on it also prints a `TimeoutNegativeWarning` for it, on every connection. This
 * gives the method the same behaviour with the delay clamped to the 1 ms Node used anyway, so the
 * warning no longer fills the service's output. Importing the module applies it, once; on any
 * other kafkajs release it changes nothing (test/unit/ingest/kafkajs-queue-timer.test.ts then
 * fails, so the next upgrade looks at it again).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

/** kafkajs's own interval for re-checking a queue that has pending requests. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

interface RequestQueue {
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  pending: unknown[];
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** True when the request queue of the installed kafkajs has the clamped timer. */
export const kafkajsQueueTimerPatched = kafkajsIsPatchedRelease;

if (kafkajsQueueTimerPatched) {
  const RequestQueue = requireKafkajsModule<{ prototype: RequestQueue }>('kafkajs/src/network/requestQueue/index.js');
  // kafkajs's method as it stands in 2.2.4, but for Math.max(1, …).
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueue) {
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.throttleCheckTimeoutId) return;
    if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL;
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      Math.max(1, scheduleAt),
    );
  };
}
