/** The order the benchmarks' servers and writers run in, round by round. */
import { describe, expect, it } from 'vitest';
import { roundOrder } from '../../../bench/lib/round-order.js';

describe('roundOrder', () => {
  it('alternates two', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(['a', 'b'], round).join(''))).toEqual(['ab', 'ba', 'ab', 'ba']);
  });

  it('gives three each of their six orders once in six rounds, and again from the seventh', () => {
    const orders = [0, 1, 2, 3, 4, 5].map((round) => roundOrder(['a', 'b', 'c'], round).join(''));
    expect(new Set(orders).size).toBe(6);
    expect(orders).toEqual(['abc', 'bca', 'cab', 'cba', 'bac', 'acb']);
    expect(roundOrder(['a', 'b', 'c'], 6).join('')).toBe('abc');
  });

  it('puts each of four first and last equally often over eight rounds', () => {
    const orders = [0, 1, 2, 3, 4, 5, 6, 7].map((round) => roundOrder(['a', 'b', 'c', 'd'], round));
    for (const item of ['a', 'b', 'c', 'd']) {
      expect(orders.filter((order) => order[0] === item)).toHaveLength(2);
      expect(orders.filter((order) => order[3] === item)).toHaveLength(2);
    }
  });

  it('leaves one alone', () => {
    expect(roundOrder(['a'], 3)).toEqual(['a']);
  });
});
