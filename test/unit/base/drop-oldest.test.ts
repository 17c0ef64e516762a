/** Bounding a set or a map by its oldest entries (src/base/drop-oldest.ts). */
import { describe, expect, it } from 'vitest';
import { dropOldest } from '../../../src/base/drop-oldest.js';

describe('dropOldest', () => {
  it('deletes the entries inserted first until the set or map holds the bound, and leaves one within it as it is', () => {
    const set = new Set(['a', 'b', 'c', 'd']);
    set.delete('a');
    set.add('a');
    dropOldest(set, 2);
    expect([...set]).toEqual(['d', 'a']);
    const map = new Map([
      ['x', 1],
      ['y', 2],
      ['z', 3],
    ]);
    dropOldest(map, 5);
    expect([...map.keys()]).toEqual(['x', 'y', 'z']);
    dropOldest(map, 0);
    expect(map.size).toBe(0);
  });
});
