/**
 * The follower over a source whose snapshot read can be raced deterministically: a message stored
 * while the snapshot is read must appear once, whether the snapshot has it or not. (Every other
 * property of following is in the result-log contract, test/log/follow-contract.ts, over the real
 * implementations.)
 */
import { describe, expect, it } from 'vitest';
import { openFollower } from '../../../src/log/follower.js';
import type { EventListener, FollowSource } from '../../../src/log/follower-types.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';
import { take } from '../../log/follow-contract.js';
import { incoming } from '../../log/storage-contract.js';

describe('openFollower', () => {
  it('has no gap and no duplicate when a message is stored while the snapshot is read', async () => {
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 1000 });
    // The source is a pure seam: a real memory log for the snapshots, and the events of what it
    // took as new handed to the listeners here, so that the read can be raced.
    const listeners = new Set<EventListener>();
    const record = async (sequence: number, final = false) => {
      const [result] = await log.append([incoming('t', { sequence, final })]);
      if (result?.outcome === 'inserted') for (const listener of listeners) listener({ message: result.message, status: result.status, arrival: sequence });
    };
    await record(1);
    // The read lets two messages land first: one the snapshot includes, one it does not.
    const source: FollowSource = {
      async read(id) {
        await record(2);
        const snapshot = await log.get(id);
        await record(3);
        return snapshot;
      },
      async listen(_id, listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      // Never paused here: it is pulled.
      readFrom: async () => [],
    };
    const stream = await openFollower(source, 't', { queueLimit: 10 });
    await record(4, true);
    expect(await take(stream, 10)).toEqual([1, 2, 3, 4]);
    expect(listeners.size).toBe(0);
    await log.dispose();
  });

  it('answers done to a pull after its reader returned or threw it, with no live part ever made', async () => {
    const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100, maxMessagesPerTest: 1000 });
    await log.create({ correlationId: 't', owner: null, input: null });
    for (const end of ['return', 'throw'] as const) {
      const follower = await log.follow('t', { queueLimit: 10 });
      // Nothing stored, nothing pulled: the follower has made no live channel yet.
      if (end === 'return') expect(await follower.return?.()).toEqual({ value: undefined, done: true });
      else await expect(follower.throw?.(new Error('left'))).rejects.toThrow('left');
      // A later pull ends at once instead of waiting on a channel nothing feeds.
      const later = await Promise.race([follower.next(), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200))]);
      expect(later).toEqual({ value: undefined, done: true });
    }
    expect(log.followers('t')).toBe(0);
    await log.dispose();
  });
});
