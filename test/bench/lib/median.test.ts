/** The one median every benchmark reports. */
import { describe, expect, it } from 'vitest';
import { median } from '../../../bench/lib/median.js';

describe('median', () => {
  it('answers the middle value of an odd count, whatever the order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([2])).toBe(2);
  });

  it('answers the upper of the two middle values of an even count, a value measured', () => {
    expect(median([4, 1, 3, 2])).toBe(3);
  });

  it('answers NaN for no values, the rows\' "no value"', () => {
    expect(median([])).toBeNaN();
  });

  it('leaves its input unsorted', () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });
});
