/**
 * The one set of shape limits for every JSON value the service stores and serves back (a test's
 * input, a result's payload): nesting depth, members per object, items per array and string
 * length, checked at the door (both doors: a start and a result record) before anything is stored.
 * A value past them could be stored but never served: serializing a value of tens of thousands of
 * levels overflows the stack, so every read of its test would fail for good.
 *
 * One walk, recursive but never deeper than `maxDepth` (which is itself bounded by
 * {@link MAX_JSON_DEPTH}), returning at the first limit passed; no allocation on the way.
 */

/** The limits a stored JSON value must keep (bytes are bounded by each door's own byte limit). */
export interface JsonShapeLimits {
  /** Deepest nesting of objects and arrays; a scalar is at depth 0, `[]` and `{}` at depth 1. */
  readonly maxDepth: number;
  /** Most members in one object. */
  readonly maxKeys: number;
  /** Most items in one array. */
  readonly maxArrayLength: number;
  /** Longest string, key or value, in UTF-16 code units. */
  readonly maxStringLength: number;
}

/** The deepest any configuration may allow: far below where serializing overflows the stack. */
export const MAX_JSON_DEPTH = 1000;

/** The limits when none are configured. */
export const DEFAULT_JSON_SHAPE: JsonShapeLimits = { maxDepth: 64, maxKeys: 10_000, maxArrayLength: 100_000, maxStringLength: 1_048_576 };

/**
 * The limits a read serves under: the widest any configuration admits, so that a value stored under
 * any setting is served, and one written by another release past them is not (it would fail the read).
 */
export const SERVABLE_JSON_SHAPE: JsonShapeLimits = { maxDepth: MAX_JSON_DEPTH, maxKeys: Infinity, maxArrayLength: Infinity, maxStringLength: Infinity };

/** Which limit a value passes. */
export type JsonShapeLimit = 'depth' | 'keys' | 'arrayLength' | 'stringLength';

/** The first limit `value` passes and a sentence saying how, or undefined when it keeps them all. */
export interface JsonShapeFault {
  readonly limit: JsonShapeLimit;
  readonly reason: string;
}

/** The first limit of `limits` that `value` (a parsed JSON value) passes, or undefined. */
export function jsonShapeFault(value: unknown, limits: JsonShapeLimits): JsonShapeFault | undefined {
  return walk(value, 0, limits);
}

/**
 * `Object.prototype.hasOwnProperty`, called on the key of a `for…in`: V8 answers that from the loop's
 * enum cache without a lookup, which it does not for `Object.hasOwn` (about 15 against 40–120 ns per
 * three-member object on Node 26). Every record's payload is walked.
 */
const hasOwn = Object.prototype.hasOwnProperty;

function walk(value: unknown, depth: number, limits: JsonShapeLimits): JsonShapeFault | undefined {
  if (typeof value === 'string') {
    return value.length > limits.maxStringLength
      ? { limit: 'stringLength', reason: `a string is longer than ${limits.maxStringLength} characters` }
      : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= limits.maxDepth) return { limit: 'depth', reason: `nested deeper than ${limits.maxDepth} levels` };
  if (Array.isArray(value)) {
    if (value.length > limits.maxArrayLength) return { limit: 'arrayLength', reason: `an array holds more than ${limits.maxArrayLength} items` };
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'object' && typeof item !== 'string') continue;
      const fault = walk(item, depth + 1, limits);
      if (fault !== undefined) return fault;
    }
    return undefined;
  }
  let keys = 0;
  for (const key in value) {
    if (!hasOwn.call(value, key)) continue;
    keys += 1;
    if (keys > limits.maxKeys) return { limit: 'keys', reason: `an object holds more than ${limits.maxKeys} members` };
    if (key.length > limits.maxStringLength) return { limit: 'stringLength', reason: `a key is longer than ${limits.maxStringLength} characters` };
    const member: unknown = (value as Record<string, unknown>)[key];
    if (typeof member !== 'object' && typeof member !== 'string') continue;
    const fault = walk(member, depth + 1, limits);
    if (fault !== undefined) return fault;
  }
  return undefined;
}
