/** The correctness table's account of what a subscriber received against what it should have. */
import { describe, expect, it } from 'vitest';
import { tally } from '../../bench/correctness.js';

describe('tally', () => {
  it('says when everything came once and in order', () => {
    expect(tally([1, 2, 3], [1, 2, 3])).toEqual({ observed: '3 of 3 received, none missing, none repeated', wrong: 0 });
  });

  it('names the missing and repeated sequences as ranges, and counts each wrong push', () => {
    expect(tally([1, 2, 3, 4, 5, 6, 7], [1, 2, 2, 3, 3, 7])).toEqual({ observed: '4 of 7 received, missing 3 (4–6), 2 repeated (2–3)', wrong: 5 });
  });

  it('counts pushes that went backwards', () => {
    expect(tally([1, 2, 3], [2, 1, 3])).toEqual({ observed: '3 of 3 received, none missing, none repeated, 1 out of order', wrong: 1 });
  });
});
