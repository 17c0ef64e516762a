/**
 * Commit tracking of the results consumer. Offsets are committed here rather than by kafkajs,
 * whose auto-commit commits after every batch whatever interval it is given: this way the interval
 * holds (fewer commit round trips under load), and a crash redelivers at most one interval's worth
 * of records, which the store ignores as duplicates.
 */
import type { Consumer } from 'kafkajs';
import type { Logger } from '../logger.js';

/** What was stored but not yet committed, and when to commit it. */
export interface OffsetCommits {
  /** Everything of `partition` before `nextOffset` is stored (the committed offset is the next one to read). */
  processed(topic: string, partition: number, nextOffset: string): void;
  /** Commits what was processed now (at a rebalance, at stop). A failed commit is logged, not thrown. */
  commit(consumer: Consumer): Promise<void>;
  /** Commits when the interval has passed since the last commit. */
  commitIfDue(consumer: Consumer): Promise<void>;
  /** Stops the idle timer. */
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

/** Creates the commit tracking of one consumer. */
export function createOffsetCommits(options: OffsetCommitsOptions): OffsetCommits {
  const uncommitted = new Map<string, { topic: string; partition: number; offset: string }>();
  let lastCommit = Date.now();

  async function commit(consumer: Consumer): Promise<void> {
    if (!options.enabled || uncommitted.size === 0) return;
    const offsets = [...uncommitted.values()];
    uncommitted.clear();
    lastCommit = Date.now();
    try {
      await consumer.commitOffsets(offsets);
    } catch (error) {
      // Not lost: the records will be redelivered to whoever owns the partition next, and stored once.
      options.log.warn({ err: error, partitions: offsets.length }, 'offset commit failed; the records will be redelivered');
    }
  }
  const due = () => Date.now() - lastCommit >= options.intervalMs;

  // Batches stop on an idle topic, and so would the commits after them: a timer commits the rest.
  const idle =
    options.enabled && options.intervalMs > 0
      ? setInterval(() => {
          const consumer = options.idleConsumer();
          if (consumer !== undefined && due()) void commit(consumer);
        }, options.intervalMs)
      : undefined;
  idle?.unref();

  return {
    processed(topic, partition, nextOffset) {
      uncommitted.set(`${topic}/${partition}`, { topic, partition, offset: nextOffset });
    },
    commit,
    commitIfDue: (consumer) => (due() ? commit(consumer) : Promise.resolve()),
    dispose() {
      if (idle !== undefined) clearInterval(idle);
    },
  };
}
