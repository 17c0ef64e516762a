/**
 * Commit tracking: the latest offset per partition, on an interval, at will, and never when
 * disabled; a failed commit kept and retried without losing a newer offset, and never for a
 * partition that moved to another member.
 */
import type { Consumer } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commitRetryDelayMs, createOffsetCommits } from '../../../src/ingest/kafka-offset-commits.js';

type Offsets = Array<{ topic: string; partition: number; offset: string }>;

/** What the fake does with a commit: send it, refuse it, or resolve without sending (kafkajs when its runner is not running). */
type Answer = 'send' | 'refuse' | 'skip';

/**
 * A consumer whose `commitOffsets` answers as scripted (then sends), and which emits COMMIT_OFFSETS
 * for what it sent, as kafkajs does before its call resolves. `sent` holds the commits that were sent.
 */
function fakeConsumer(answers: Answer[] = [], during?: () => void) {
  const calls: Offsets[] = [];
  const sent: Offsets[] = [];
  const listeners = new Set<(event: unknown) => void>();
  const consumer = {
    events: { COMMIT_OFFSETS: 'consumer.commit_offsets' },
    on: (_name: string, listener: (event: unknown) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    commitOffsets: async (offsets: Offsets) => {
      calls.push(offsets);
      during?.();
      const answer = answers.shift() ?? 'send';
      if (answer === 'refuse') throw new Error('not the coordinator');
      if (answer === 'skip') return;
      sent.push(offsets);
      const topics = [...new Set(offsets.map((o) => o.topic))].map((topic) => ({
        topic,
        partitions: offsets.filter((o) => o.topic === topic).map(({ partition, offset }) => ({ partition, offset })),
      }));
      for (const listener of listeners) listener({ payload: { topics } });
    },
  } as unknown as Consumer;
  return { consumer, calls, sent };
}

const log = pino({ level: 'silent' });

afterEach(() => {
  vi.useRealTimers();
});

describe('createOffsetCommits', () => {
  it('commits the latest processed offset of each partition once, and nothing when nothing is new', async () => {
    const { consumer, calls } = fakeConsumer();
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log });
    commits.processed('results', 0, '5');
    commits.processed('results', 1, '3');
    commits.processed('results', 0, '9');
    await commits.commit(consumer);
    await commits.commit(consumer);
    expect(calls).toEqual([
      [
        { topic: 'results', partition: 0, offset: '9' },
        { topic: 'results', partition: 1, offset: '3' },
      ],
    ]);
    commits.dispose();
  });

  it('commits when due: every batch with interval 0, otherwise once the interval has passed', async () => {
    vi.useFakeTimers();
    const { consumer, calls } = fakeConsumer();
    const commits = createOffsetCommits({ enabled: true, intervalMs: 5000, idleConsumer: () => undefined, log });
    commits.processed('results', 0, '1');
    await commits.commitIfDue(consumer);
    expect(calls).toHaveLength(0);
    vi.advanceTimersByTime(5000);
    await commits.commitIfDue(consumer);
    expect(calls).toHaveLength(1);
    commits.dispose();
  });

  it('commits what an idle topic left behind from its timer, through the consumer it is given', async () => {
    vi.useFakeTimers();
    const { consumer, calls } = fakeConsumer();
    let idle: Consumer | undefined;
    const commits = createOffsetCommits({ enabled: true, intervalMs: 1000, idleConsumer: () => idle, log });
    commits.processed('results', 2, '7');
    vi.advanceTimersByTime(1000);
    expect(calls).toHaveLength(0); // no consumer to commit through (being replaced, or draining)
    idle = consumer;
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual([[{ topic: 'results', partition: 2, offset: '7' }]]);
    commits.dispose();
  });

  it('logs a failed commit instead of throwing, and keeps its offsets for the next commit', async () => {
    const { consumer, calls, sent } = fakeConsumer(['refuse']);
    const warnings: string[] = [];
    const capture = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log: capture });
    commits.processed('results', 0, '4');
    await expect(commits.commit(consumer)).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(warnings.join('')).toContain('offset commit failed');
    await commits.commit(consumer); // at a rebalance or stop: whatever the pause
    expect(sent).toEqual([[{ topic: 'results', partition: 0, offset: '4' }]]);
    commits.dispose();
  });

  it('retries a failed commit on a quiet topic after a growing pause, with no batch and no interval to prompt it', async () => {
    vi.useFakeTimers();
    const { consumer, calls, sent } = fakeConsumer(['refuse', 'refuse']);
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => consumer, log });
    commits.processed('results', 0, '4');
    await commits.commit(consumer);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(commitRetryDelayMs(1) - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2); // refused again: the pause doubles
    await vi.advanceTimersByTimeAsync(commitRetryDelayMs(2) - 1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([[{ topic: 'results', partition: 0, offset: '4' }]]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(3); // nothing left to retry
    commits.dispose();
  });

  it('retries at the next batch once the pause is over, not before', async () => {
    vi.useFakeTimers();
    const { consumer, calls, sent } = fakeConsumer(['refuse']);
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log });
    commits.processed('results', 0, '4');
    await commits.commitIfDue(consumer);
    commits.processed('results', 0, '8');
    await commits.commitIfDue(consumer);
    expect(calls).toHaveLength(1);
    vi.setSystemTime(Date.now() + commitRetryDelayMs(1));
    await commits.commitIfDue(consumer);
    expect(sent).toEqual([[{ topic: 'results', partition: 0, offset: '8' }]]);
    commits.dispose();
  });

  it('never replaces an offset stored while a commit was in flight with the older one that commit failed to send', async () => {
    let commits: ReturnType<typeof createOffsetCommits> | undefined;
    // While the commit of 4 is in flight, the partition is stored up to 9.
    const { consumer, sent } = fakeConsumer(['refuse'], () => commits?.processed('results', 0, '9'));
    commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log });
    commits.processed('results', 0, '4');
    await commits.commit(consumer);
    await commits.commit(consumer);
    expect(sent).toEqual([[{ topic: 'results', partition: 0, offset: '9' }]]);
    commits.dispose();
  });

  it('keeps an offset stored while its commit succeeded for the next commit', async () => {
    let commits: ReturnType<typeof createOffsetCommits> | undefined;
    const { consumer, sent } = fakeConsumer([], () => commits?.processed('results', 0, '9'));
    commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log });
    commits.processed('results', 0, '4');
    await commits.commit(consumer);
    await commits.commit(consumer);
    expect(sent.map((offsets) => offsets.map((o) => o.offset))).toEqual([['4'], ['9']]);
    commits.dispose();
  });

  it('keeps the offsets when kafkajs resolves without sending them (its consumer not running)', async () => {
    const { consumer, calls, sent } = fakeConsumer(['skip']);
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log });
    commits.processed('results', 1, '6');
    await commits.commit(consumer);
    await commits.commit(consumer);
    expect(calls).toHaveLength(2);
    expect(sent).toEqual([[{ topic: 'results', partition: 1, offset: '6' }]]);
    commits.dispose();
  });

  it('commits nothing more for a partition that moved to another member, pending or stored later', async () => {
    vi.useFakeTimers();
    const { consumer, sent } = fakeConsumer(['refuse']);
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => consumer, log });
    commits.processed('results', 0, '4');
    commits.processed('results', 1, '7');
    await commits.commit(consumer); // refused, as at a rebalance
    commits.assigned({ results: [1] }); // the rejoin leaves partition 1 to this member
    commits.processed('results', 0, '5'); // a lane that had not heard of it yet
    await vi.advanceTimersByTimeAsync(commitRetryDelayMs(1));
    expect(sent).toEqual([[{ topic: 'results', partition: 1, offset: '7' }]]);
    await commits.commit(consumer);
    expect(sent).toHaveLength(1);
    commits.dispose();
  });

  it('stops retrying once disposed, but still commits at stop', async () => {
    vi.useFakeTimers();
    const { consumer, calls, sent } = fakeConsumer(['refuse']);
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => consumer, log });
    commits.processed('results', 0, '4');
    await commits.commit(consumer);
    commits.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
    await commits.commit(consumer);
    expect(sent).toEqual([[{ topic: 'results', partition: 0, offset: '4' }]]);
  });

  it('never commits when disabled (the replicated mode re-reads the topic at every start)', async () => {
    const { consumer, calls } = fakeConsumer();
    const commits = createOffsetCommits({ enabled: false, intervalMs: 0, idleConsumer: () => consumer, log });
    commits.processed('results', 0, '4');
    await commits.commit(consumer);
    await commits.commitIfDue(consumer);
    expect(calls).toHaveLength(0);
    commits.dispose();
  });
});
