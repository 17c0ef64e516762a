/** The fan-out benchmark's search for the highest rate a server sustains. */
import { describe, expect, it } from 'vitest';
import { stepSearch } from '../../../bench/lib/step-search.js';

describe('stepSearch', () => {
  it('tries rates in increasing order and stops at the first that fails', async () => {
    const tried: number[] = [];
    const search = await stepSearch(
      [50, 10, 20, 100],
      async (rate) => {
        tried.push(rate);
        return { p99: rate * 10 };
      },
      (r) => r.p99 <= 300,
    );
    expect(tried).toEqual([10, 20, 50]);
    expect(search.sustained).toBe(20);
    expect(search.steps.map((s) => [s.rate, s.ok])).toEqual([
      [10, true],
      [20, true],
      [50, false],
    ]);
  });

  it('reports 0 when even the lowest rate fails, and the highest rate when none fails', async () => {
    expect(
      (
        await stepSearch(
          [5, 10],
          async (rate) => rate,
          () => false,
        )
      ).sustained,
    ).toBe(0);
    expect(
      (
        await stepSearch(
          [5, 10],
          async (rate) => rate,
          () => true,
        )
      ).sustained,
    ).toBe(10);
  });
});
