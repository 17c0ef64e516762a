/**
 * The holder of none, one or a set of values (a followed test's followers, a test's listeners):
 * a set made only for a second value and dropped once emptied.
 */
import { describe, expect, it } from 'vitest';
import { holds, listOf, withOne, withoutOne, type OneOrSet } from '../../../src/base/one-or-set.js';

describe('one or a set', () => {
  const a = { name: 'a' };
  const b = { name: 'b' };
  const c = { name: 'c' };

  it('holds one value without a set, and makes a set only for a second', () => {
    let held: OneOrSet<object> = withOne(undefined, a);
    expect(held).toBe(a);
    expect(withOne(held, a)).toBe(a);
    held = withOne(held, b);
    expect(held).toBeInstanceOf(Set);
    const set = held;
    expect(withOne(held, c)).toBe(set);
    expect(listOf(held)).toHaveLength(3);
    expect([a, b, c].map((value) => holds(held, value))).toEqual([true, true, true]);
    expect(holds(held, { name: 'a' })).toBe(false);
    expect(listOf(held)).toEqual([a, b, c]);
    expect(listOf(a)).toEqual([a]);
    expect(listOf(undefined)).toEqual([]);
  });

  it('lets go of a value, and of an emptied set', () => {
    expect(withoutOne(a, a)).toBeUndefined();
    expect(withoutOne(a, b)).toBe(a);
    expect(withoutOne(undefined, a)).toBeUndefined();
    const held = withOne(withOne(a, b), c);
    expect(withoutOne(held, a)).toBe(held);
    expect(listOf(held)).toEqual([b, c]);
    expect(holds(held, a)).toBe(false);
    expect(withoutOne(held, b)).toBe(held);
    expect(withoutOne(held, c)).toBeUndefined();
  });
});
