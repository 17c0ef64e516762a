/**
 * The served schema says what schema/*.graphql says: every description of a type, field, argument,
 * input field and enum value the SDL writes is the one introspection answers, in the plain and in
 * the federated schema (a resolver, such as a custom scalar's, must not bring descriptions of its own).
 */
import { buildASTSchema, concatAST, isEnumType, isInputObjectType, isInterfaceType, isObjectType, parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSchema, loadTypeDefs } from '../../../../src/graphql/schema/schema.js';

/** Every description in `schema` of what the SDL defines, by its coordinate (`Type`, `Type.field`, `Type.field(arg:)`). */
function descriptions(schema: GraphQLSchema, names: readonly string[]): Map<string, string | null | undefined> {
  const out = new Map<string, string | null | undefined>();
  for (const name of names) {
    const type = schema.getType(name);
    if (type === undefined) throw new Error(`${name} is missing`);
    out.set(name, type.description);
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        out.set(`${name}.${field.name}`, field.description);
        for (const arg of 'args' in field ? field.args : []) out.set(`${name}.${field.name}(${arg.name}:)`, arg.description);
      }
    }
    if (isEnumType(type)) for (const value of type.getValues()) out.set(`${name}.${value.name}`, value.description);
  }
  return out;
}

describe('the served schema', () => {
  const sdl = buildASTSchema(concatAST(loadTypeDefs().map((text) => parse(text))));
  const names = Object.keys(sdl.getTypeMap()).filter((name) => !name.startsWith('__') && !['String', 'Int', 'Float', 'Boolean', 'ID'].includes(name));
  const written = descriptions(sdl, names);

  it('describes every type and field as schema/*.graphql does, custom scalars included', () => {
    expect(written.get('JSON')).toMatch(/^Arbitrary JSON value/);
    expect(written.get('DateTime')).toMatch(/^An instant in time/);
    expect(descriptions(createSchema(), names)).toEqual(written);
  });

  it('describes them alike in the federated schema', () => {
    // Federation adds fields of its own (`Query._entities`, `Query._service`): only the SDL's are compared.
    const served = descriptions(createSchema({ federation: true }), names);
    expect(new Map([...written.keys()].map((coordinate) => [coordinate, served.get(coordinate)]))).toEqual(written);
  });
});
