/**
 * Commit tracking of the results consumer. Offsets are committed here rather than by kafkajs,
 * whose auto-commit commits after every batch whatever interval it is given: this way the interval
 * holds (fewer commit round trips under load), and a crash redelivers at most one interval's worth
 * of records, which the store ignores as duplicates.
 *
 * A commit that fails keeps its offsets pending and is retried with a growing pause, by a timer
 * (a quiet partition has no next batch to do it) or at the next batch, whichever comes first:
 * dropping it would leave a quiet partition's committed offset behind what was stored, so a
 * restart would read those records again, and after the store's TTL bring their tests back as new
 * ones with no owner. A commit counts as done only once kafkajs reports it sent (its
 * COMMIT_OFFSETS event): kafkajs's `commitOffsets` resolves without committing when its runner is
 * not running (between a crash and its restart), which would otherwise drop the offsets as well.
 *
 * Only this member's partitions are committed. The classic group protocol checks a commit's
 * generation and member, not who owns the partition, and kafkajs sends every commit with its
 * current generation: a retry after a rebalance would be accepted for a partition another member
 * owns now, and move that partition's committed offset back to where this member left it (its
 * records would be read again). So the assignment each join brings (see {@link OffsetCommits.assigned})
 * drops what is pending for partitions that moved away, and offsets of partitions outside it are
 * not taken. What was stored before a rebalance is committed once more when it starts, while the
 * member still holds the old generation (see kafka-result-consumer.ts).
 */
import type { Consumer } from 'kafkajs';
import { ServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';

/** What was stored but not yet committed, and when to commit it. */
export interface OffsetCommits {
  /** Everything of `partition` before `nextOffset` is stored (the committed offset is the next one to read). */
  processed(topic: string, partition: number, nextOffset: string): void;
  /**
   * This member's partitions as of its last join, by topic: what is pending for any other partition
   * is dropped, and such offsets are ignored from now on (see the file's comment).
   */
  assigned(assignment: Readonly<Record<string, readonly number[]>>): void;
  /**
   * Commits what is pending now (at a rebalance, at stop), backoff or not, after the commit in
   * flight if there is one. A failed commit is logged, not thrown, and its offsets stay pending.
   */
  commit(consumer: Consumer): Promise<void>;
  /**
   * Commits when the interval has passed since the last commit, or the pause after a failed one.
   * Never rejects (a failure is logged and retried), so a caller need not wait for it.
   */
  commitIfDue(consumer: Consumer): Promise<void>;
  /** Stops the timers; {@link OffsetCommits.commit} still works (the last commit at stop). */
  dispose(): void;
}

/** Options of {@link createOffsetCommits}. */
export interface OffsetCommitsOptions {
  /** False to never commit (replicated mode re-reads the topic at every start). */
  readonly enabled: boolean;
  /** Interval between commits; 0 commits after every batch. */
  readonly intervalMs: number;
  /** The consumer to commit through when the topic is idle (none while it is replaced or draining). */
  readonly idleConsumer: () => Consumer | undefined;
  readonly log: Logger;
}

/** The pause before retrying a failed commit: 1 s, doubling with each failure in a row, at most 30 s. */
export function commitRetryDelayMs(failures: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));
}

interface Pending {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

const keyOf = (topic: string, partition: number) => `${topic}/${partition}`;

/** Creates the commit tracking of one consumer. */
export function createOffsetCommits(options: OffsetCommitsOptions): OffsetCommits {
  const { log } = options;
  // One entry per partition, replaced (never mutated) by each newer offset: a commit removes an
  // entry only if it is still the one it sent, so an offset stored meanwhile is never lost.
  const pending = new Map<string, Pending>();
  let owned: Set<string> | undefined;
  let lastCommit = Date.now();
  let failures = 0;
  let retryAt = 0;
  let inFlight: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let disposed = false;

  async function commit(consumer: Consumer): Promise<void> {
    if (!options.enabled) return;
    // One commit at a time: two in flight could land in either order and move an offset back.
    while (inFlight !== undefined) await inFlight;
    if (pending.size === 0) return;
    inFlight = attempt(consumer).finally(() => {
      inFlight = undefined;
    });
    await inFlight;
  }

  async function attempt(consumer: Consumer): Promise<void> {
    const offsets = [...pending.values()];
    lastCommit = Date.now();
    try {
      await commitConfirmed(consumer, offsets);
    } catch (error) {
      failures += 1;
      const delayMs = commitRetryDelayMs(failures);
      retryAt = Date.now() + delayMs;
      scheduleRetry(delayMs);
      log.warn({ err: error, partitions: offsets.length, failures, retryInMs: delayMs }, 'offset commit failed; retrying');
      return;
    }
    failures = 0;
    for (const sent of offsets) {
      const key = keyOf(sent.topic, sent.partition);
      if (pending.get(key) === sent) pending.delete(key);
    }
  }

  const due = () => (failures > 0 ? Date.now() >= retryAt : Date.now() - lastCommit >= options.intervalMs);

  /** Retries a failed commit after its pause, through the idle consumer: the topic may stay quiet. */
  function scheduleRetry(delayMs: number): void {
    if (disposed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (disposed || failures === 0 || pending.size === 0) return;
      const consumer = options.idleConsumer();
      // No consumer now (one being replaced): try again after the same pause.
      if (consumer === undefined) scheduleRetry(delayMs);
      else if (inFlight === undefined) void commit(consumer);
    }, delayMs);
    retry.unref();
  }

  // Batches stop on an idle topic, and so would the commits after them: a timer commits the rest.
  const idle =
    options.enabled && options.intervalMs > 0
      ? setInterval(() => {
          const consumer = options.idleConsumer();
          if (consumer !== undefined && inFlight === undefined && due()) void commit(consumer);
        }, options.intervalMs)
      : undefined;
  idle?.unref();

  return {
    processed(topic, partition, nextOffset) {
      const key = keyOf(topic, partition);
      if (owned !== undefined && !owned.has(key)) return;
      pending.set(key, { topic, partition, offset: nextOffset });
    },
    assigned(assignment) {
      owned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => keyOf(topic, p))));
      for (const key of pending.keys()) if (!owned.has(key)) pending.delete(key);
    },
    commit,
    commitIfDue: (consumer) => (inFlight === undefined && due() ? commit(consumer) : Promise.resolve()),
    dispose() {
      disposed = true;
      if (idle !== undefined) clearInterval(idle);
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
    },
  };
}

/**
 * Commits `offsets` and checks that kafkajs sent them: its `commitOffsets` resolves without a word
 * when its runner is not running, so only its COMMIT_OFFSETS event, emitted once the broker
 * accepted the commit and before the call resolves, says they were.
 */
async function commitConfirmed(consumer: Consumer, offsets: readonly Pending[]): Promise<void> {
  const sent = new Set<string>();
  const stopListening = consumer.on(consumer.events.COMMIT_OFFSETS, (event) => {
    for (const { topic, partitions } of event.payload.topics) for (const p of partitions) sent.add(`${keyOf(topic, Number(p.partition))}@${String(p.offset)}`);
  });
  try {
    await consumer.commitOffsets(offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset })));
  } finally {
    stopListening();
  }
  const missing = offsets.filter((o) => !sent.has(`${keyOf(o.topic, o.partition)}@${o.offset}`));
  if (missing.length > 0)
    throw new ServiceError('BROKER_UNAVAILABLE', `kafkajs did not send the commit of ${missing.length} partitions (its consumer is not running)`);
}
