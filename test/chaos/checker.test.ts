/**
 * The chaos checker's pure parts: the verdict on a history (each check failing on the defect it is
 * there to find, and on nothing else), the memory trend, the fault windows, and the nemesis's seeded
 * schedule.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_GRACE_MS, heapTrendCheck, inFault, judge, settleCheck, slopeMbPerHour, type Verdict } from '../../chaos/checker.js';
import { createHistory, type History } from '../../chaos/history.js';
import { seededRandom } from '../../chaos/nemesis.js';

describe('chaos checker', () => {
  it('measures a memory trend in MB an hour, flat as zero and a steady rise as its rate', () => {
    const minute = 60_000;
    expect(slopeMbPerHour([0, 1, 2, 3].map((i) => ({ x: i * minute, y: 100e6 })))).toBe(0);
    // 1 MB a minute is 60 MB an hour.
    expect(slopeMbPerHour([0, 1, 2, 3].map((i) => ({ x: i * minute, y: 100e6 + i * 1e6 })))).toBeCloseTo(60, 6);
    expect(slopeMbPerHour([{ x: 0, y: 5 }])).toBe(0);
  });

  it('holds a heap watched long enough to no steep rise, and lets a short-lived one be', () => {
    const slope = (replica: string, heapMbPerHour: number, minutes: number) => ({ replica, heapMbPerHour, minutes, rssMbPerHour: 0, samples: 10 });
    expect(heapTrendCheck([slope('api-2', 30, 30), slope('api-1', 500, 5)]).ok).toBe(true);
    expect(heapTrendCheck([slope('api-2', 90, 30)])).toMatchObject({ ok: false, detail: expect.stringContaining('api-2 90.0 MB/h over 30 min') });
  });

  it('counts a moment as in a fault from its start to its end and the grace after it, an unhealed fault as open', () => {
    const history = createHistory();
    history.faults.push({ kind: 'replica killed', target: 'api-1', start: 1_000, end: 2_000 });
    expect([999, 1_000, 2_000 + FAULT_GRACE_MS, 2_001 + FAULT_GRACE_MS].map((at) => inFault(history, at))).toEqual([false, true, true, false]);
    history.faults.push({ kind: 'kafka node killed', target: 'node 1', start: 100_000, end: undefined });
    expect(inFault(history, 10_000_000)).toBe(true);
  });

  it('fails a run whose streams or followers had not finished within the limit after the faults stopped, rather than waiting on', () => {
    const history = createHistory();
    expect(settleCheck(history).ok).toBe(false);
    history.settle = { limitMs: 180_000, tookMs: undefined };
    expect(settleCheck(history)).toMatchObject({ ok: false, detail: 'not within 3 min' });
    history.settle = { limitMs: 180_000, tookMs: 12_345 };
    expect(settleCheck(history)).toMatchObject({ ok: true, detail: 'in 12.3 s (limit 3 min)' });
  });

  it('draws the same schedule from the same seed, and another from another', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    expect(draw(7).every((n) => n >= 0 && n < 1)).toBe(true);
  });
});

/** A run where everything went right: two tests, each stored, followed and requested in full. */
function cleanRun(): { history: History; stored: Map<string, number[] | undefined> } {
  const history = createHistory();
  const stored = new Map<string, number[] | undefined>();
  for (const id of ['t-1', 't-2']) {
    history.started.set(id, 1_000);
    history.requestsSeen.add(id);
    history.acked.set(id, { sequences: new Set([1, 2, 3]), final: 3 });
    history.followers.set(id, { transport: 'ws', sequences: [1, 2, 3], ids: [`${id}:1`, `${id}:2`, `${id}:3`], reconnects: 0, end: { status: 'completed' } });
    stored.set(id, [1, 2, 3]);
  }
  history.reads.push({ at: 2_000, kind: 'test', status: 200 });
  history.settle = { limitMs: 180_000, tookMs: 1_000 };
  return { history, stored };
}

/** The names of the checks a verdict failed. */
const failed = (verdict: Verdict) => verdict.checks.filter((c) => !c.ok).map((c) => c.name);

describe('chaos checker verdict', () => {
  it('passes a run where every result was stored, followed and requested once', () => {
    const { history, stored } = cleanRun();
    const verdict = judge(history, stored);
    expect(failed(verdict)).toEqual([]);
    expect(verdict.figures).toMatchObject({ tests: 2, produced: 6, stored: 6, delivered: 6, lost: 0, duplicated: 0 });
  });

  it.each<[string, string, (run: ReturnType<typeof cleanRun>) => void]>([
    ['a result acknowledged but not stored', 'every acknowledged result stored', ({ stored }) => stored.set('t-1', [1, 3])],
    ['a test the store could not be read for', 'every acknowledged result stored', ({ stored }) => stored.set('t-2', undefined)],
    ['a result stored twice', 'each stored once', ({ stored }) => stored.set('t-1', [1, 2, 2, 3])],
    ['results listed out of order', 'stored in order', ({ stored }) => stored.set('t-1', [1, 3, 2])],
    [
      'a follower missing a message',
      'every follower got every message once and the final one',
      ({ history }) => {
        const follower = history.followers.get('t-1');
        if (follower) follower.sequences.splice(1, 1);
      },
    ],
    [
      'a follower handed a message twice',
      'every follower got every message once and the final one',
      ({ history }) => {
        history.followers.get('t-2')?.ids.push('t-2:2');
      },
    ],
    [
      'a follower that never saw the final message',
      'every follower got every message once and the final one',
      ({ history }) => {
        const follower = history.followers.get('t-1');
        if (follower) follower.end = undefined;
      },
    ],
    [
      'a started test whose request never reached the topic',
      "every started test's request reached the requests topic",
      ({ history }) => {
        history.requestsSeen.delete('t-2');
      },
    ],
    [
      'a request whose start was never answered',
      'no request without its test: every request read is of a start the client was answered',
      ({ history }) => {
        history.requestsSeen.add('t-stray');
      },
    ],
    [
      'a 5xx outside every fault window',
      'no failed read outside the fault windows',
      ({ history }) => {
        history.faults.push({ kind: 'replica killed', target: 'api-1', start: 10_000, end: 11_000 });
        history.reads.push({ at: 10_500, kind: 'test', status: 503 }, { at: 11_000 + FAULT_GRACE_MS + 1, kind: 'tests', status: 502 });
      },
    ],
    [
      'a read with no answer outside every fault window',
      'no failed read outside the fault windows',
      ({ history }) => {
        history.reads.push({ at: 5_000, kind: 'rest', status: 0 });
      },
    ],
    [
      'a replica killed after its SIGTERM',
      'every replica asked to stop exited within its shutdown timeout',
      ({ history }) => {
        history.wedged.push({ at: 5_000, replica: 'consumer' });
      },
    ],
    [
      'a heap rising over half an hour',
      'no upward trend of any replica heap',
      ({ history }) => {
        // 2 MB a minute for 30 minutes: 120 MB an hour.
        for (let minute = 0; minute <= 30; minute += 1)
          history.memory.push({ at: minute * 60_000, replica: 'api-2', pid: 7, rss: 200e6, heap: 50e6 + minute * 2e6 });
      },
    ],
  ])('fails on %s, that check alone', (_defect, check, spoil) => {
    const run = cleanRun();
    spoil(run);
    expect(failed(judge(run.history, run.stored))).toEqual([check]);
  });
});
