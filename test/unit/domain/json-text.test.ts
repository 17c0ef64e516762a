/** Stored JSON text copied into a serialization: the same text `JSON.stringify` gives for the value it stands for. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonText, stringifyWithText } from '../../../src/domain/json-text.js';

/** A value as results hold them: JSON, with undefined and functions where JSON.stringify drops or nulls them. */
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(undefined, () => 1, new Date(0)),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('stringifyWithText', () => {
  it('is JSON.stringify for a value without stored text', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(stringifyWithText(v)).toBe(JSON.stringify(v));
      }),
    );
  });

  it('copies each stored text where it stands, which JSON.stringify reaches by parsing it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 6 }), (stored, key) => {
        const holder = { a: [1, new JsonText(JSON.stringify(stored))], [key]: { inner: new JsonText(JSON.stringify(stored)) } };
        expect(stringifyWithText(holder)).toBe(JSON.stringify(holder));
      }),
    );
  });
});
