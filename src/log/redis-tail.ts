/**
 * The live side of the Redis log in one process: one tail per followed test, shared by all of the
 * process's followers of that test. A tail listens to the test's channel on the subscriber
 * connection; each notice says how many messages the test holds, and the tail reads the ones after
 * the last it delivered (`LRANGE` from there, on the command connection) and hands them on in
 * order, with the status each leaves the test in. So a notice lost while the subscriber connection
 * was down loses nothing: when the connection is back (and subscribed again), every tail re-reads
 * after the last message it delivered.
 */
import { nextStatus } from '../domain/status.js';
import type { TestMessage, TestStatus } from '../domain/types.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventListener } from './follower.js';
import { createLocalFanout } from './local-fanout.js';
import { decodeNotice } from './message-format.js';
import type { RedisPubSub } from './redis-pubsub.js';

/** What a tail reads from the log. */
export interface TailReads {
  /** How many messages the test holds, and its status after them. */
  head(correlationId: string): Promise<{ readonly count: number; readonly status: TestStatus }>;
  /**
   * The messages from arrival index `from` on, in arrival order, and how many stored entries that
   * read covered (more than the messages when some could not be read and were skipped).
   */
  after(correlationId: string, from: number): Promise<{ readonly messages: TestMessage[]; readonly read: number }>;
}

/** Options of {@link createRedisTails}. */
export interface RedisTailsOptions {
  /** Pub/sub on the subscriber connection (classic on one node, sharded on Redis Cluster). */
  readonly pubsub: RedisPubSub;
  readonly channelOf: (correlationId: string) => string;
  readonly reads: TailReads;
  /** Re-read every tail this often, whether or not a notice came (Redis Cluster); never when absent. */
  readonly recheckMs?: number;
  readonly logger: Logger;
}

/** The tails of one process. */
export interface RedisTails {
  listen(correlationId: string, listener: EventListener): Promise<() => void>;
  count(correlationId?: string): number;
  dispose(): void;
}

interface Tail {
  readonly correlationId: string;
  /** Messages delivered so far (the arrival index of the next one); -1 until the tail has started. */
  next: number;
  /** The test's status after the delivered messages. */
  status: TestStatus;
  started: Promise<void>;
  reading: boolean;
  /** A notice came while reading: read again when done. */
  again: boolean;
}

/** Creates the tails of a process over `subscriber`. */
export function createRedisTails(options: RedisTailsOptions): RedisTails {
  const { pubsub, channelOf, reads } = options;
  const log = options.logger.child({ component: 'redis-tail' });
  const tails = new Map<string, Tail>();
  const byChannel = new Map<string, Tail>();
  const fanout = createLocalFanout((correlationId) => {
    const tail = tails.get(correlationId);
    if (tail === undefined) return;
    tails.delete(correlationId);
    byChannel.delete(channelOf(correlationId));
    pubsub.unsubscribe([channelOf(correlationId)]).catch((error: unknown) => log.warn({ err: error, correlationId }, 'unsubscribe failed'));
  });

  async function catchUp(tail: Tail): Promise<void> {
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = true;
    try {
      do {
        tail.again = false;
        const { messages, read } = await reads.after(tail.correlationId, tail.next);
        if (tails.get(tail.correlationId) !== tail) return;
        // Past every entry read, the skipped ones included: they are not read again.
        tail.next += read;
        for (const message of messages) {
          tail.status = nextStatus(tail.status, message);
          fanout.emit(tail.correlationId, { message, status: tail.status });
        }
      } while (tail.again);
    } catch (error) {
      // The next notice, or the subscriber's return, reads again from the same place.
      log.warn({ err: error, correlationId: tail.correlationId }, 'could not read new messages of a followed test');
    } finally {
      tail.reading = false;
    }
  }

  const onMessage = (channel: string, notice: string) => {
    const tail = byChannel.get(channel);
    if (tail === undefined || tail.next < 0) return;
    if (decodeNotice(notice) > tail.next) void catchUp(tail);
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
  // that is empty when nothing was missed), so a lost notice delays messages, never loses them.
  const recheck = options.recheckMs === undefined ? undefined : setInterval(catchUpAll, options.recheckMs);
  recheck?.unref();

  async function start(tail: Tail): Promise<void> {
    await pubsub.subscribe([channelOf(tail.correlationId)]);
    const head = await reads.head(tail.correlationId);
    tail.next = head.count;
    tail.status = head.status;
  }

  return {
    async listen(correlationId, listener) {
      const { remove, first } = fanout.add(correlationId, listener);
      let tail = tails.get(correlationId) as Tail;
      if (first) {
        const fresh: Tail = { correlationId, next: -1, status: 'PENDING', started: Promise.resolve(), reading: false, again: false };
        tails.set(correlationId, fresh);
        byChannel.set(channelOf(correlationId), fresh);
        fresh.started = start(fresh);
        tail = fresh;
      }
      try {
        await tail.started;
      } catch (error) {
        remove();
        throw new ServiceError('STORE_UNAVAILABLE', 'Live updates are unavailable (Redis).', { cause: error });
      }
      return remove;
    },
    count: (correlationId) => fanout.count(correlationId),
    dispose() {
      stopMessages();
      stopResubscribed();
      clearInterval(recheck);
      tails.clear();
      byChannel.clear();
      fanout.clear();
    },
  };
}
