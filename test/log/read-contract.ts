/**
 * The read part of the result-log contract (result-log-contract.ts): `getMany` answers summaries
 * without messages, and `messages` answers one page of a test in its order, the same page whatever
 * order its messages arrived in (the Redis log reads a page as a range of its list while arrival
 * order is the read order, and the whole list otherwise).
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/domain/types.js';
import type { MessageRange, ResultLog } from '../../src/log/result-log.js';
import { incoming, uniqueId, type StorageContext } from './storage-contract.js';

/** Every message of a test, read page by page of `size`, as keys. */
async function readInPages(log: ResultLog, id: string, size: number): Promise<string[]> {
  const keys: string[] = [];
  let range: MessageRange = { first: size };
  for (;;) {
    const page = await log.messages(id, range);
    if (page === null) throw new Error(`${id} is gone`);
    keys.push(...page.messages.map((m) => m.key));
    const last = page.messages.at(-1);
    if (!page.hasNextPage || last === undefined) return keys;
    range = { first: size, afterKey: last.key };
  }
}

/** Registers the read tests; `context.log()` is a fresh log for each test. */
export function describeReadContract(context: StorageContext): void {
  describe('reads of summaries and pages', () => {
    let log: ResultLog;
    beforeEach(async () => {
      log = await context.log();
    });

    it('answers summaries without messages from getMany, in the order asked, null where a test is unknown', async () => {
      const a = uniqueId('sum-a');
      const b = uniqueId('sum-b');
      const created = await log.create({ correlationId: a, input: { name: 'run' }, owner: 'alice' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await log.append([incoming(a, { sequence: 1 }), incoming(a, { sequence: 2, final: true }), incoming(b, { sequence: 1 })]);
      const [summaryA, missing, summaryB] = await log.getMany([a, uniqueId('missing'), b]);
      expect(summaryA).toMatchObject({
        correlationId: a,
        status: 'COMPLETED',
        input: { name: 'run' },
        owner: 'alice',
        createdAt: created.createdAt,
        messageCount: 2,
      });
      expect(summaryA?.updatedAt).toBeGreaterThan(created.updatedAt);
      expect(summaryA).not.toHaveProperty('messages');
      expect(missing).toBeNull();
      expect(summaryB).toMatchObject({ correlationId: b, status: 'RUNNING', input: null, owner: null, messageCount: 1 });
    });

    it("answers a page of a test's messages in its order, after a key, with whether more follow and the total", async () => {
      const id = uniqueId('pages');
      await log.append([1, 2, 3, 4, 5].map((sequence) => incoming(id, { sequence })));
      const first = await log.messages(id, { first: 2 });
      expect(first?.messages.map((m) => m.sequence)).toEqual([1, 2]);
      expect(first).toMatchObject({ hasNextPage: true, totalCount: 5 });
      expect(first?.messages[0]).toMatchObject({ correlationId: id, key: 's:1', final: false, payload: { n: 1 } });
      const second = await log.messages(id, { first: 2, afterKey: 's:2' });
      expect(second?.messages.map((m) => m.sequence)).toEqual([3, 4]);
      const last = await log.messages(id, { first: 2, afterKey: 's:4' });
      expect(last?.messages.map((m) => m.sequence)).toEqual([5]);
      expect(last).toMatchObject({ hasNextPage: false, totalCount: 5 });
      expect(await log.messages(id, { first: 10, afterKey: 's:5' })).toEqual({ messages: [], hasNextPage: false, totalCount: 5 });
      expect(await log.messages(id, { first: 0 })).toEqual({ messages: [], hasNextPage: true, totalCount: 5 });
      expect(await log.messages(id, { first: 0, afterKey: 's:5' })).toEqual({ messages: [], hasNextPage: false, totalCount: 5 });
    });

    it('answers null for an unknown test, an empty page for a test without messages, and refuses a key the test does not hold as expired', async () => {
      expect(await log.messages(uniqueId('unknown'), { first: 10 })).toBeNull();
      const id = uniqueId('empty');
      await log.create({ correlationId: id, input: null, owner: 'alice' });
      expect(await log.messages(id, { first: 10 })).toEqual({ messages: [], hasNextPage: false, totalCount: 0 });
      await log.append([incoming(id, { sequence: 1 })]);
      await expect(log.messages(id, { first: 10, afterKey: 's:2' })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED', details: { argument: 'after' } });
    });

    it("pages in the test's order when messages arrive out of sequence, unsequenced or twice, in batches or one by one", async () => {
      // A message: a sequence (or none), and whether it ends its batch.
      const arrival = fc.array(fc.tuple(fc.option(fc.integer({ min: -3, max: 12 }), { nil: null }), fc.boolean()), { minLength: 1, maxLength: 24 });
      await fc.assert(
        fc.asyncProperty(arrival, fc.integer({ min: 1, max: 5 }), async (messages, size) => {
          const id = uniqueId('order');
          let batch: IncomingMessage[] = [];
          for (const [sequence, ends] of messages) {
            batch.push(incoming(id, sequence === null ? { payload: 'unsequenced' } : { sequence }));
            if (ends) {
              await log.append(batch);
              batch = [];
            }
          }
          if (batch.length > 0) await log.append(batch);
          const whole = (await log.get(id))?.messages.map((m) => m.key);
          expect(await readInPages(log, id, size)).toEqual(whole);
          expect((await log.messages(id, { first: 1000 }))?.totalCount).toBe(whole?.length);
        }),
        { numRuns: 40 },
      );
    });
  });
}
