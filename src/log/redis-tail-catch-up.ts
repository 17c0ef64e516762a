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
import { MAX_LOST_KEYS, type Realignment } from './follower-types.js';
import { dropOldest } from '../base/drop-oldest.js';

/** What a tail reads from the log. */
export interface TailReads {
  /**
   * How many messages the test holds, its status after them, and the keys of its last `keys`
   * entries (none by default), oldest first, as of one instant.
   */
  head(correlationId: string, keys?: number): Promise<{ readonly count: number; readonly status: TestStatus; readonly keys: readonly string[] }>;
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
/**
 * How far `recent` may grow past RECENT_KEYS before it is cut back (so that a key costs no copy
 * each time): at its fullest it holds MAX_LOST_KEYS, the most a realignment names.
 */
const RECENT_SLACK = MAX_LOST_KEYS - RECENT_KEYS;

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
  /**
   * Keys delivered whose writes a failover lost: stored again, such a message is marked so, and
   * goes only to the followers that lack it.
   */
  lost: Set<string>;
  /** While a message is handed on: whether it is one of `lost`. */
  emitting: boolean;
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
    lost: new Set(),
    emitting: false,
    failures: 0,
    retry: undefined,
  };
}

/**
 * Starts `tail` at its test's count, knowing the keys of the last messages before it: so a failover
 * that loses writes before the tail delivered anything is recognised (by its keys, and by a notice
 * counting fewer), and the followers, whose snapshots hold those messages, are told which were lost.
 */
export async function startTail(tail: Tail, reads: TailReads): Promise<void> {
  const head = await reads.head(tail.correlationId, RECENT_KEYS);
  tail.next = head.count;
  tail.status = head.status;
  tail.recent = [...head.keys];
  // A first notice of a smaller count says the list was shortened (a notice sent before this read
  // costs a read that finds the tail's last key in place).
  tail.heard = head.count;
}

/** Options of {@link createTailCatchUp}. */
export interface TailCatchUpOptions {
  readonly reads: TailReads;
  readonly log: Logger;
  /** Whether `tail` is still the one its test is followed by (a read that returns for a removed tail delivers nothing). */
  readonly current: (tail: Tail) => boolean;
  /** Hands one delivered message of `tail` on, to the followers of its test. */
  readonly emit: (tail: Tail, event: TestMessageEvent) => void;
  /** Tells the followers of `tail`'s test that a failover lost writes, before anything numbered again is emitted. */
  readonly realigned: (tail: Tail, realignment: Realignment) => void;
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
      tail.emitting = tail.lost.delete(message.key);
      options.emit(tail, { message, status: tail.status, arrival: tail.next });
      tail.emitting = false;
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
      // No key to check it by (a failover lost more than the tail remembered): taken as it stands.
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
    const lostKeys = tail.recent.slice(same);
    const lostAfter = tail.next - known + same;
    for (const key of lostKeys) tail.lost.add(key);
    // Bounded: the oldest losses go first.
    dropOldest(tail.lost, RECENT_KEYS);
    tail.recent = tail.recent.slice(0, same);
    tail.next = Math.min(tail.next, base + same);
    options.realigned(tail, { kept: tail.next, lostKeys, lostAfter });
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
