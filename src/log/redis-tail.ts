/**
 * The live side of the Redis log in one process: one tail per followed test, shared by all of the
 * process's followers of that test. A tail listens to the test's channel on the subscriber
 * connection; each notice says how many messages the test holds, and the tail reads the ones after
 * the last it delivered (`LRANGE` from there, on the command connection) and hands them on in
 * order, with the status each leaves the test in. So a notice lost while the subscriber connection
 * was down loses nothing: when the connection is back (and subscribed again), every tail re-reads
 * after the last message it delivered.
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
 * A message it delivered whose write the failover lost, stored again by the consumer, goes only to
 * the followers that came after the loss: the others have it.
 */
import { nextStatus } from '../domain/status.js';
import type { TestMessage, TestStatus } from '../domain/types.js';
import { ServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { EventListener, ListenOptions } from './follower-types.js';
import { startExpiryChecks } from './redis-tail-expiry.js';
import { testExpired } from './test-expired.js';
import { createLocalFanout } from './local-fanout.js';
import { decodeNotice } from './message-format.js';
import type { RedisPubSub } from './redis-pubsub.js';

/** What a tail reads from the log. */
export interface TailReads {
  /** How many messages the test holds, and its status after them. */
  head(correlationId: string): Promise<{ readonly count: number; readonly status: TestStatus }>;
  /**
   * The entries from arrival index `from` on, in arrival order: each a message, or a stored text
   * that holds none ({@link UnreadableEntry}), which keeps its place in the list but is not delivered.
   */
  after(correlationId: string, from: number): Promise<ReadonlyArray<TestMessage | UnreadableEntry>>;
  /** Whether the test is still stored (its keys expire together; Redis tells no one when they do). */
  exists(correlationId: string): Promise<boolean>;
}

/** A stored text that holds no message: skipped (and counted by the reads), its place kept. */
export interface UnreadableEntry {
  /** Stands for the text (a digest of it), so the tail recognises the entry where it was. */
  readonly key: string;
  /** Why it holds no message. */
  readonly unreadable: string;
}

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
  count(correlationId?: string): number;
  dispose(): void;
}

/** The first delay before a failed read of a tail is retried; doubled after each failure. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;
/**
 * Keys of the last messages delivered that a tail keeps, to recognise its place in a list a
 * failover shortened: as many as one append call stores for one test at most (a chunk of the
 * consumer), which is what a failover can lose with `REDIS_WAIT_REPLICAS=1` (the write's notice
 * goes out, and its messages may be delivered, before `WAIT` answers).
 */
const RECENT_KEYS = 1000;
/** How far `recent` may grow past RECENT_KEYS before it is cut back (so that a key costs no copy each time). */
const RECENT_SLACK = 250;

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
  /** The count of the last notice: counts only grow, unless a failover shortened the list. */
  heard: number;
  /** The keys at arrival indexes `next - recent.length` … `next - 1`, oldest first (about RECENT_KEYS). */
  recent: string[];
  /** Failovers that shortened the list so far. */
  losses: number;
  /**
   * Keys delivered whose writes a failover lost, with the number of that loss: stored again, such
   * a message goes only to the followers that came after the loss (the others have it).
   */
  lost: Map<string, number>;
  /** While a message is handed on: the loss it was lost in (0: none). */
  emitting: number;
  /** Reads failed in a row, and the retry scheduled after the last. */
  failures: number;
  retry: NodeJS.Timeout | undefined;
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
    clearTimeout(tail.retry);
    tails.delete(correlationId);
    byChannel.delete(channelOf(correlationId));
    pubsub.unsubscribe([channelOf(correlationId)]).catch((error: unknown) => log.warn({ err: error, correlationId }, 'unsubscribe failed'));
  });
  const current = (tail: Tail) => tails.get(tail.correlationId) === tail;

  /** Hands the messages of `entries`, stored from arrival index `tail.next` on, to the followers. */
  const deliver = (tail: Tail, entries: ReadonlyArray<TestMessage | UnreadableEntry>) => {
    for (const message of entries) {
      tail.next += 1;
      remember(tail, message.key);
      // Its place is kept; there is nothing to hand on.
      if ('unreadable' in message) continue;
      tail.status = nextStatus(tail.status, message);
      // Delivered before the failover that lost its write, and stored again since.
      tail.emitting = tail.lost.get(message.key) ?? 0;
      if (tail.emitting > 0) tail.lost.delete(message.key);
      fanout.emit(tail.correlationId, { message, status: tail.status, arrival: tail.next });
      tail.emitting = 0;
    }
  };

  /** Reads what follows the last message delivered and delivers it; false once the tail is gone. */
  async function readOnce(tail: Tail): Promise<boolean> {
    // From the last message delivered on, to check that it is still where it was.
    const from = Math.max(0, tail.next - 1);
    const messages = await reads.after(tail.correlationId, from);
    if (!current(tail)) return false;
    if (tail.next === 0) {
      deliver(tail, messages);
      return true;
    }
    const last = tail.recent.at(-1);
    const first = messages[0];
    if (first !== undefined && (last === undefined || first.key === last)) {
      // In every follower's snapshot when the tail has delivered nothing yet (it started at the test's count).
      if (last === undefined) remember(tail, first.key);
      deliver(tail, messages.slice(1));
      return true;
    }
    return realign(tail);
  }

  /**
   * The list no longer holds the last message delivered where it was: a failover lost writes.
   * Finds the first index where the list and what was delivered part, and goes on from there.
   */
  async function realign(tail: Tail): Promise<boolean> {
    const known = tail.recent.length;
    let base = tail.next - known;
    const messages = await reads.after(tail.correlationId, base);
    if (!current(tail)) return false;
    if (messages.length === 0 && base > 0) {
      // Shorter than what the tail remembers: on from its end as it stands.
      base = Math.min(base, (await reads.head(tail.correlationId)).count);
      if (!current(tail)) return false;
    }
    let same = 0;
    while (same < known && same < messages.length && messages[same]?.key === tail.recent[same]) same += 1;
    if (same === 0 && base > 0)
      log.warn(
        { correlationId: tail.correlationId, delivered: tail.next, from: base },
        'a failover lost more messages of a followed test than its tail remembers; some may be missed or delivered twice',
      );
    else
      log.warn(
        { correlationId: tail.correlationId, delivered: tail.next, kept: base + same },
        'a failover lost messages of a followed test already delivered; going on from where the list now ends',
      );
    tail.losses += 1;
    for (const key of tail.recent.slice(same)) tail.lost.set(key, tail.losses);
    // Bounded: the oldest losses go first (a Map keeps its insertion order).
    for (const key of tail.lost.keys()) {
      if (tail.lost.size <= RECENT_KEYS) break;
      tail.lost.delete(key);
    }
    tail.recent = tail.recent.slice(0, same);
    tail.next = Math.min(tail.next, base + same);
    deliver(tail, messages.slice(same));
    return true;
  }

  async function catchUp(tail: Tail): Promise<void> {
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = true;
    clearTimeout(tail.retry);
    tail.retry = undefined;
    try {
      do {
        tail.again = false;
        if (!(await readOnce(tail))) return;
      } while (tail.again);
      tail.failures = 0;
    } catch (error) {
      // No later notice may come (the test's last message was stored while the read could not be
      // made): read again from the same place, a little later each time, until it succeeds.
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** tail.failures);
      tail.failures += 1;
      // The first failure, then every tenth (a failover fails every tail's reads at once).
      if (tail.failures % 10 === 1)
        log.warn(
          { err: error, correlationId: tail.correlationId, failures: tail.failures, retryInMs: delay },
          'could not read new messages of a followed test; retrying',
        );
      if (current(tail)) {
        tail.retry = setTimeout(() => void catchUp(tail), delay);
        tail.retry.unref();
      }
    } finally {
      tail.reading = false;
    }
  }

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
            if (tail !== undefined && tail.next >= 0) fanout.gone(id, testExpired(id, 'expired'));
          },
        });

  async function start(tail: Tail): Promise<void> {
    await pubsub.subscribe([channelOf(tail.correlationId)]);
    const head = await reads.head(tail.correlationId);
    tail.next = head.count;
    tail.status = head.status;
  }

  return {
    async listen(correlationId, listener, listenOptions) {
      // A test's tail lives as long as it has listeners (the fanout's `onLast` removes it).
      let tail = tails.get(correlationId);
      if (tail === undefined) {
        tail = {
          correlationId,
          next: -1,
          status: 'PENDING',
          started: Promise.resolve(),
          reading: false,
          again: false,
          heard: -1,
          recent: [],
          losses: 0,
          lost: new Map(),
          emitting: 0,
          failures: 0,
          retry: undefined,
        };
        tails.set(correlationId, tail);
        byChannel.set(channelOf(correlationId), tail);
      }
      const own = tail;
      const joined = own.losses;
      const { remove, first } = fanout.add(
        correlationId,
        (event) => {
          // A message lost in a failover after this listener came, stored again: it has it already.
          if (own.emitting <= joined) listener(event);
        },
        listenOptions,
      );
      if (first) own.started = start(own);
      try {
        await own.started;
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
      stopExpiryChecks?.();
      for (const tail of tails.values()) clearTimeout(tail.retry);
      tails.clear();
      byChannel.clear();
      fanout.clear();
    },
  };
}

/** Keeps `key` as the key of the last message delivered, and about RECENT_KEYS before it. */
function remember(tail: Tail, key: string): void {
  tail.recent.push(key);
  if (tail.recent.length > RECENT_KEYS + RECENT_SLACK) tail.recent = tail.recent.slice(-RECENT_KEYS);
}
