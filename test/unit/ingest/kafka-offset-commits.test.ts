/** Commit tracking: the latest offset per partition, on an interval, at will, and never when disabled. */
import type { Consumer } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOffsetCommits } from '../../../src/ingest/kafka-offset-commits.js';

type Offsets = Array<{ topic: string; partition: number; offset: string }>;

function fakeConsumer(fail = false) {
  const calls: Offsets[] = [];
  const consumer = {
    commitOffsets: async (offsets: Offsets) => {
      calls.push(offsets);
      if (fail) throw new Error('not the coordinator');
    },
  } as unknown as Consumer;
  return { consumer, calls };
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

  it('logs a failed commit instead of throwing (the records are redelivered and stored once)', async () => {
    const { consumer, calls } = fakeConsumer(true);
    const warnings: string[] = [];
    const capture = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const commits = createOffsetCommits({ enabled: true, intervalMs: 0, idleConsumer: () => undefined, log: capture });
    commits.processed('results', 0, '4');
    await expect(commits.commit(consumer)).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(warnings.join('')).toContain('offset commit failed');
    commits.dispose();
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
