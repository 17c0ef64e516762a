/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: each connection's request queue
 * checks for pending requests on a timer that never stops. `checkPendingRequests` ends by
 * scheduling the next check whether or not anything is pending, and with nothing pending and no
 * throttling the delay is negative, so the check runs again a millisecond later, for as long as the
 * connection lives (tulios/kafkajs#1556, #1704; the fix proposed upstream, #1667, was never
 * released). An idle service paid about 35 ms of CPU a second for it, the main thread woken a
 * thousand times a second to find nothing to send (bench/README.md, "kafkajs's request queue
 * polled every millisecond").
 *
 * This schedules a check only while requests are pending, which is the only time one can send
 * anything: a request is pending only after `push` found it could not be sent at once (throttled
 * by the broker, or too many in flight), and `push` then schedules a check itself; the check a
 * response or a timeout runs (`fulfillRequest`, a request's `timeout`) is kafkajs's, unchanged.
 * With requests pending, the check is scheduled as kafkajs schedules it, through the delay clamp of
 * kafkajs-queue-timer.ts.
 *
 * The service's processes load this (its Kafka client and its consumers); the benchmarks' ceilings
 * and the common-stack peer run kafkajs's own queue (with the clamp alone), as they run kafkajs's
 * own record decoder. On any other kafkajs release it changes nothing
 * (test/unit/ingest/kafkajs-idle-queue.test.ts then fails, so the next upgrade looks at it again).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';
import './kafkajs-queue-timer.js';

interface RequestQueue {
  pending: unknown[];
  scheduleCheckPendingRequests(): void;
}

type Schedule = RequestQueue['scheduleCheckPendingRequests'] & { [IDLE]?: true };

/** Marks the replacement, so that loading this module again (a test runner's fresh module graph) does not wrap it twice. */
const IDLE = Symbol.for('result-collection-service.kafkajs-idle-queue');

/** True when the request queue of the installed kafkajs checks for pending requests only while there are some. */
export const kafkajsIdleQueuePatched = kafkajsIsPatchedRelease;

if (kafkajsIdleQueuePatched) {
  const { prototype } = requireKafkajsModule<{ prototype: RequestQueue }>('kafkajs/src/network/requestQueue/index.js');
  const current = prototype.scheduleCheckPendingRequests as Schedule;
  if (current[IDLE] !== true) {
    const idle: Schedule = function scheduleCheckPendingRequests(this: RequestQueue) {
      if (this.pending.length === 0) return;
      current.call(this);
    };
    idle[IDLE] = true;
    prototype.scheduleCheckPendingRequests = idle;
  }
}
