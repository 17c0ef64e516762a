/**
 * How one tail of the Redis log (redis-tail.ts) reads what follows the last message it delivered:
 * from that message on, checking that it is still where it was; when it is not (a failover lost
 * writes), finding where the list and what was delivered part and going on from there; a read that
 * fails retried with backoff until it succeeds or the tail is gone. The tails' owner says what a
 * delivered message becomes (`emit`) and whether a tail is still its current one.
 */
import { nextStatus } from '../domain/status.js';
import type { TestMessage, TestMessageEvent, TestStatus } from '../domain/types.js';
import type { Logger } from '../base/logger.js';

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

/** One followed test's place in its list, and the state of reading it. */
export interface Tail {
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

/** A tail that has not started (`next` is -1 until it reads the test's count). */
export function newTail(correlationId: string): Tail {
  return {
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
}

/** Options of {@link createTailCatchUp}. */
export interface TailCatchUpOptions {
  readonly reads: TailReads;
  readonly log: Logger;
  /** Whether `tail` is still the one its test is followed by (a read that returns for a removed tail delivers nothing). */
  readonly current: (tail: Tail) => boolean;
  /** Hands one delivered message of `tail` on, to the followers of its test. */
  readonly emit: (tail: Tail, event: TestMessageEvent) => void;
}

/** Creates the catch-up of the tails of one process: reads after a tail's last message and delivers what follows. */
export function createTailCatchUp(options: TailCatchUpOptions): (tail: Tail) => Promise<void> {
  const { reads, log, current } = options;

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
      options.emit(tail, { message, status: tail.status, arrival: tail.next });
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

  return catchUp;
}

/** Keeps `key` as the key of the last message delivered, and about RECENT_KEYS before it. */
function remember(tail: Tail, key: string): void {
  tail.recent.push(key);
  if (tail.recent.length > RECENT_KEYS + RECENT_SLACK) tail.recent = tail.recent.slice(-RECENT_KEYS);
}
