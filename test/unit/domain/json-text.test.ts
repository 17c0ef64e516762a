/** Stored JSON text copied into a serialization: the same text `JSON.stringify` gives for the value it stands for. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELD_JSON_TEXT, jsonField, JsonText, stringifyWithText } from '../../../src/domain/json-text.js';

/** A value as results hold them: JSON, with undefined and functions where JSON.stringify drops or nulls them. */
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(undefined, () => 1, new Date(0), 'json-text-0', '"json-text-x-0"'),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('stringifyWithText', () => {
  it('is JSON.stringify for a value without stored text', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(stringifyWithText({ v })).toBe(JSON.stringify({ v }));
        expect(stringifyWithText([v])).toBe(JSON.stringify([v]));
      }),
    );
  });

  it('copies each stored text where it stands, which JSON.stringify reaches by parsing it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), value, fc.string({ maxLength: 6 }), (stored, other, key) => {
        const text = JSON.stringify(stored);
        const holder = { a: [1, new JsonText(text), other], [key]: { inner: new JsonText(text) }, b: new JsonText(text) };
        expect(stringifyWithText(holder)).toBe(JSON.stringify(holder));
      }),
    );
  });

  it('copies a lone stored text wherever it stands, the whole value included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), value, fc.nat({ max: 3 }), (stored, other, where) => {
        const t = new JsonText(JSON.stringify(stored));
        const holder = [{ t, other }, [other, t], { deep: { deeper: [t] }, other }, t][where] as object;
        expect(stringifyWithText(holder)).toBe(JSON.stringify(holder));
      }),
    );
  });

  it('copies as many texts as a page holds, past the marks it keeps', () => {
    const texts = Array.from({ length: 150 }, (_, i) => new JsonText(JSON.stringify({ i, s: `t${i}` })));
    const page = { edges: texts.map((payload, sequence) => ({ node: { sequence, payload } })) };
    expect(stringifyWithText(page)).toBe(JSON.stringify(page));
  });

  it('parses the text for any other serializer, also while one runs', () => {
    const text = '{"a":[1,"two"]}';
    const inner = { toJSON: () => JSON.parse(JSON.stringify({ n: new JsonText(text) })) as unknown };
    expect(stringifyWithText({ inner, t: new JsonText(text) })).toBe('{"inner":{"n":{"a":[1,"two"]}},"t":{"a":[1,"two"]}}');
    expect(JSON.stringify(new JsonText(text))).toBe(text);
  });
});

describe('jsonField', () => {
  it("answers a holder's text as JsonText, null for a stored null, and the property where there is no text", () => {
    const holder = {
      payload: 'parsed',
      other: 2,
      [FIELD_JSON_TEXT]: (field: string) => (field === 'payload' ? '{"x":1}' : field === 'none' ? 'null' : undefined),
    };
    expect(jsonField(holder, 'payload')).toEqual(new JsonText('{"x":1}'));
    expect(jsonField(holder, 'none')).toBeNull();
    expect(jsonField(holder, 'other')).toBe(2);
    expect(jsonField({ payload: { y: 2 } }, 'payload')).toEqual({ y: 2 });
  });
});
