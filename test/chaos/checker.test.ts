/** The chaos checker's pure parts: the memory trend, the fault windows, and the nemesis's seeded schedule. */
import { describe, expect, it } from 'vitest';
import { FAULT_GRACE_MS, heapTrendCheck, inFault, settleCheck, slopeMbPerHour } from '../../chaos/checker.js';
import { createHistory } from '../../chaos/history.js';
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
