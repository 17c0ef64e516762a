/**
 * The live side of the Redis log in one process: one tail per followed test, shared by all of the
 * process's followers of that test. A tail listens to the test's channel on the subscriber
 * connection; each notice says how many messages the test holds, and the tail reads the ones after
 * the last it delivered (`LRANGE` from there, on the command connection) and hands them on in
 * order, with the status each leaves the test in. So a notice lost while the subscriber connection
 * was down loses nothing: when the connection is back (and subscribed again), every tail re-reads
 * after the last message it delivered. How a tail reads, realigns after a failover and retries is
 * redis-tail-catch-up.ts; this file keeps the tails, their channels and their listeners.
 *
 * A read that fails is retried with backoff (100 ms, doubling to 5 s) until it succeeds or the tail
 * is gone, on every shape: after a Sentinel failover the subscriber connection may be back before
 * the command connection, and a test whose last message was stored in that moment gets no later
 * notice to read it for.
 *
 * A failover can also shorten a test's list: a replica promoted without the last writes. Each read
 * starts at the last message delivered and checks that it is still there (by key), and a notice
 * whose count does not grow says so too; then the tail finds where the list and what it delivered
 * part (it keeps the keys of about the last 1,000 messages it delivered) and goes on from there.
 * It tells the followers where the list now ends before it delivers anything numbered anew; a
 * message it delivered whose write the failover lost, stored again by the consumer, is marked so,
 * and goes only to the followers that lack it.
 */
import { ServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { EventListener, ListenOptions } from './follower-types.js';
import { startExpiryChecks } from './redis-tail-expiry.js';
import { testExpired } from './test-expired.js';
import { createTestListeners } from './test-listeners.js';
import { decodeNotice } from './message-format.js';
import type { RedisPubSub } from './redis-pubsub.js';
import { createTailCatchUp, newTail, startTail, type Tail, type TailReads } from './redis-tail-catch-up.js';

/** Options of {@link createRedisTails}. */
export interface RedisTailsOptions {
  /** Pub/sub on the subscriber connection (classic on one node, sharded on Redis Cluster). */
  readonly pubsub: RedisPubSub;
  readonly channelOf: (correlationId: string) => string;
  readonly reads: TailReads;
  /** Re-read every tail this often, whether or not a notice came (Redis Cluster); never when absent. */
  readonly recheckMs?: number;
  /**
   * Check this often that each followed test is still stored, and end its followers with
   * TEST_EXPIRED when it is not (keys expire silently: no notice says so); never when absent.
   */
  readonly expiryCheckMs?: number;
  readonly logger: Logger;
}

/** The tails of one process. */
export interface RedisTails {
  listen(correlationId: string, listener: EventListener, options?: ListenOptions): Promise<() => void>;
  dispose(): void;
}

/** Creates the tails of a process over `subscriber`. */
export function createRedisTails(options: RedisTailsOptions): RedisTails {
  const { pubsub, channelOf, reads } = options;
  const log = options.logger.child({ component: 'redis-tail' });
  const tails = new Map<string, Tail>();
  const byChannel = new Map<string, Tail>();
  const listeners = createTestListeners((correlationId) => {
    const tail = tails.get(correlationId);
    if (tail === undefined) return;
    clearTimeout(tail.retry);
    tails.delete(correlationId);
    byChannel.delete(channelOf(correlationId));
    pubsub.unsubscribe([channelOf(correlationId)]).catch((error: unknown) => log.warn({ err: error, correlationId }, 'unsubscribe failed'));
  });
  const current = (tail: Tail) => tails.get(tail.correlationId) === tail;
  const catchUp = createTailCatchUp({
    reads,
    log,
    current,
    emit: (tail, event) => listeners.emit(tail.correlationId, event),
    realigned: (tail, realignment) => listeners.realigned(tail.correlationId, realignment),
  });

  const onMessage = (channel: string, notice: string) => {
    const tail = byChannel.get(channel);
    if (tail === undefined || tail.next < 0) return;
    const count = decodeNotice(notice);
    if (Number.isNaN(count)) return;
    // A test's notices come in the order of its writes on one primary: a count that does not grow
    // says a failover shortened the list.
    const shortened = count <= tail.heard;
    tail.heard = count;
    if (count > tail.next || shortened) void catchUp(tail);
  };

  // After a reconnect, a failover or a slot move, notices may have been missed: every tail
  // re-reads after the last message it delivered.
  const stopMessages = pubsub.onMessage(onMessage);
  const catchUpAll = () => {
    for (const tail of tails.values()) if (tail.next >= 0) void catchUp(tail);
  };
  const stopResubscribed = pubsub.onResubscribed(catchUpAll);
  // A safety net where notices travel by sharded pub/sub: ioredis follows failovers and slot moves
  // with subscribers of its own making, and a subscription lost on the way would stall a tail until
  // its test's next notice. Every `recheckMs` each tail re-reads after its last message (an LRANGE
  // of one message when nothing was missed), so a lost notice delays messages, never loses them.
  const recheck = options.recheckMs === undefined ? undefined : setInterval(catchUpAll, options.recheckMs);
  recheck?.unref();

  // A followed test that gets no message for the TTL expires in Redis without a word (redis-tail-expiry.ts).
  const stopExpiryChecks =
    options.expiryCheckMs === undefined
      ? undefined
      : startExpiryChecks({
          everyMs: options.expiryCheckMs,
          followed: () => [...tails.values()].filter((tail) => tail.next >= 0).map((tail) => tail.correlationId),
          exists: (id) => reads.exists(id),
          gone: (id) => {
            const tail = tails.get(id);
            if (tail !== undefined && tail.next >= 0) listeners.gone(id, testExpired(id, 'expired'));
          },
        });

  async function start(tail: Tail): Promise<void> {
    await pubsub.subscribe([channelOf(tail.correlationId)]);
    await startTail(tail, reads);
  }

  return {
    async listen(correlationId, listener, listenOptions) {
      // A test's tail lives as long as it has listeners (the listeners' `onLast` removes it).
      let tail = tails.get(correlationId);
      if (tail === undefined) {
        tail = newTail(correlationId);
        tails.set(correlationId, tail);
        byChannel.set(channelOf(correlationId), tail);
      }
      const own = tail;
      // A message lost in a failover, stored again, is marked so: its listener (the log's followed
      // tests) gives it only to the followers that lack it.
      const { remove, first } = listeners.add(correlationId, (event) => listener(event, own.emitting), listenOptions);
      if (first) own.started = start(own);
      try {
        await own.started;
      } catch (error) {
        remove();
        throw new ServiceError('STORE_UNAVAILABLE', 'Live updates are unavailable (Redis).', { cause: error });
      }
      return remove;
    },
    dispose() {
      stopMessages();
      stopResubscribed();
      clearInterval(recheck);
      stopExpiryChecks?.();
      for (const tail of tails.values()) clearTimeout(tail.retry);
      tails.clear();
      byChannel.clear();
      listeners.clear();
    },
  };
}
