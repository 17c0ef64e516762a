/** Opaque names for libraries that index definitions by name in plain objects (src/graphql/pipeline/opaque-names.ts). */
import { buildSchema, parse, print, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { withOpaqueNames } from '../../../../src/graphql/pipeline/opaque-names.js';
import { depthRule } from '../../../../src/graphql/pipeline/plugins/operation-limits.js';

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'];
const schema = buildSchema('type Query { a: A } type A { b: A, c: Int }');

describe('withOpaqueNames', () => {
  it('renames operations and fragments, spreads with them, and gives the names back', () => {
    const opaque = withOpaqueNames(parse('query __proto__ { a { ...toString } } query valueOf { a { c } } fragment toString on A { c }'));
    expect(print(opaque!.document)).toBe(print(parse('query o0 { a { ...f0 } } query o1 { a { c } } fragment f0 on A { c }')));
    expect(['o0', 'o1', 'f0', 'elsewhere'].map((name) => opaque!.original(name))).toEqual(['__proto__', 'valueOf', 'toString', 'elsewhere']);
  });

  it('answers nothing for a spread of a fragment the document lacks', () => {
    expect(withOpaqueNames(parse('{ a { ...constructor } }'))).toBeUndefined();
  });
});

describe('the depth rule, with graphql-depth-limit behind it', () => {
  it.each(PROTOTYPE_NAMES)('measures an operation or fragment named %s, and names it in its refusal', (name) => {
    const deep = parse(`query ${name} { a { ...F } } fragment F on A { b { b { b { c } } } }`);
    const errors = validate(schema, deep, [depthRule(2)]);
    expect(errors.map((e) => [e.message, e.extensions.code])).toEqual([[`'${name}' exceeds maximum operation depth of 2`, 'QUERY_TOO_DEEP']]);
    expect(validate(schema, parse(`query ${name} { a { ...${name} } } fragment ${name} on A { c }`), [depthRule(2)])).toEqual([]);
  });

  it.each(PROTOTYPE_NAMES)('leaves a spread of an undefined fragment %s to graphql-js, without throwing', (name) => {
    expect(() => validate(schema, parse(`{ a { ...${name} } }`), [depthRule(2)])).not.toThrow();
    expect(validate(schema, parse(`{ a { ...${name} } }`)).map((e) => e.message)).toEqual([`Unknown fragment "${name}".`]);
  });
});
