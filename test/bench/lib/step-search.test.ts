/** The fan-out benchmark's search for the highest rate a server sustains. */
import { describe, expect, it } from 'vitest';
import { stepSearch } from '../../../bench/lib/step-search.js';

describe('stepSearch', () => {
  it('tries rates in increasing order and stops at the first that fails twice', async () => {
    const tried: number[] = [];
    const search = await stepSearch(
      [50, 10, 20, 100],
      async (rate) => {
        tried.push(rate);
        return { p99: rate * 10 };
      },
      (r) => r.p99 <= 300,
    );
    expect(tried).toEqual([10, 20, 50, 50]);
    expect(search.sustained).toBe(20);
    expect(search.steps.map((s) => [s.rate, s.ok, s.attempt])).toEqual([
      [10, true, 1],
      [20, true, 1],
      [50, false, 1],
      [50, false, 2],
    ]);
  });

  it('goes on past a step that fails once and passes when repeated (one noisy second)', async () => {
    const tried: number[] = [];
    const search = await stepSearch(
      [10, 20, 40],
      async (rate) => {
        tried.push(rate);
        // The first measurement at 20 is spoiled; its repeat is not.
        return tried.length === 2 ? 1_000 : rate;
      },
      (p99) => p99 <= 30,
    );
    expect(tried).toEqual([10, 20, 20, 40, 40]);
    expect(search.sustained).toBe(20);
    expect(search.steps.map((s) => [s.rate, s.ok, s.attempt])).toEqual([
      [10, true, 1],
      [20, false, 1],
      [20, true, 2],
      [40, false, 1],
      [40, false, 2],
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
