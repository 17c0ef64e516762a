/**
 * The shape limits of every stored JSON value: each limit refused just past it and kept at it, the
 * first fault named, and no value, however deep, overflowing the walk.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_JSON_SHAPE, jsonShapeFault, SERVABLE_JSON_SHAPE } from '../../../src/base/json-shape.js';

const limits = { maxDepth: 3, maxKeys: 2, maxArrayLength: 2, maxStringLength: 4 };
const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('jsonShapeFault', () => {
  it('keeps values at every limit, scalars included', () => {
    for (const value of [null, 1, true, 'abcd', nested(3), { ab: [1, 'abcd'], cd: { x: [] } }]) expect(jsonShapeFault(value, limits)).toBeUndefined();
  });

  it('names the first limit a value passes', () => {
    expect(jsonShapeFault(nested(4), limits)?.limit).toBe('depth');
    expect(jsonShapeFault({ a: 1, b: 2, c: 3 }, limits)?.limit).toBe('keys');
    expect(jsonShapeFault([1, 2, 3], limits)?.limit).toBe('arrayLength');
    expect(jsonShapeFault(['abcde'], limits)?.limit).toBe('stringLength');
    expect(jsonShapeFault({ abcde: 1 }, limits)?.limit).toBe('stringLength');
    expect(jsonShapeFault(JSON.parse('{"__proto__":{"a":{"b":[]}}}'), { ...limits, maxStringLength: 9 })?.limit).toBe('depth');
  });

  it('stops at the limit however deep the value is (no stack overflow)', () => {
    expect(jsonShapeFault(nested(100_000), DEFAULT_JSON_SHAPE)?.limit).toBe('depth');
    expect(jsonShapeFault(nested(100_000), SERVABLE_JSON_SHAPE)?.limit).toBe('depth');
    expect(jsonShapeFault(nested(DEFAULT_JSON_SHAPE.maxDepth), DEFAULT_JSON_SHAPE)).toBeUndefined();
  });
});
