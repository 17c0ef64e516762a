/** The executable schema: SDL from schema/*.graphql (the single source of truth) plus resolvers. */
import { readdirSync, readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLScalarType, Kind, parse, type DocumentNode, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { ServiceError } from '../../base/errors.js';
import type { GraphQLContext } from '../pipeline/context.js';
import { MAX_IDS_PER_QUERY, resolvers } from './resolvers.js';

// From src/graphql/ and from dist/graphql/ alike, the SDL lives two levels up.
const SCHEMA_DIR = new URL('../../../schema/', import.meta.url);

/** The Federation 2 version the subgraph SDL links to. */
export const FEDERATION_SPEC_URL = 'https://specs.apollo.dev/federation/v2.7';

/** Options of {@link createSchema}. */
export interface SchemaOptions {
  /** Build an Apollo Federation 2 subgraph (`FEDERATION=on`) instead of the plain schema. */
  readonly federation?: boolean;
}

/** Reads every `.graphql` file of schema/, in name order. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => readFileSync(new URL(name, SCHEMA_DIR), 'utf8'));
}

/** Builds the executable schema. Built once per process and shared by HTTP, WebSocket and SSE. */
export function createSchema(options: SchemaOptions = {}): GraphQLSchema {
  if (options.federation === true) return createSubgraphSchema();
  return makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers: sdlWorded(resolvers) as never });
}

/**
 * The resolver map with each custom scalar reduced to its coercion. Both builders (graphql-tools,
 * @apollo/subgraph) copy every property of a scalar resolver onto the SDL's type, its description
 * and `specifiedByURL` too, so a whole GraphQLScalarType would replace the SDL's words with its own
 * (graphql-scalars' ECMA-404 note for JSON, none for DateTime): schema/*.graphql alone describes.
 */
function sdlWorded<T extends object>(map: T): T {
  const entries = Object.entries(map).map(([name, value]) =>
    value instanceof GraphQLScalarType ? [name, { serialize: value.serialize, parseValue: value.parseValue, parseLiteral: value.parseLiteral }] : [name, value],
  );
  return Object.fromEntries(entries) as T;
}

/**
 * The subgraph SDL: schema/*.graphql with the federation link and `Test @key(fields: "correlationId")`
 * added to the parsed document, so the federated and the plain schema stay one text.
 */
export function subgraphTypeDefs(): DocumentNode {
  const documents = loadTypeDefs().map((text) => parse(text));
  const definitions = documents.flatMap((document) =>
    document.definitions.map((definition) => {
      if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || definition.name.value !== 'Test') return definition;
      const key = parse('type Test @key(fields: "correlationId") { _: Int }').definitions[0];
      if (key?.kind !== Kind.OBJECT_TYPE_DEFINITION) throw new Error('unreachable');
      return { ...definition, directives: [...(definition.directives ?? []), ...(key.directives ?? [])] };
    }),
  );
  const link = parse(`extend schema @link(url: "${FEDERATION_SPEC_URL}", import: ["@key"])`).definitions;
  return { kind: Kind.DOCUMENT, definitions: [...link, ...definitions] };
}

/**
 * The federated schema. A gateway's `_entities` batch resolves each representation through
 * `Test.__resolveReference`, and every one of them goes through the request's DataLoader, so the
 * batch is one `log.getMany` of summaries; scope and ownership are those of `test(correlationId:)`,
 * checked before any message is read (a page, when `messages` is selected).
 */
function createSubgraphSchema(): GraphQLSchema {
  const testResolvers = resolvers.Test ?? {};
  const schema = buildSubgraphSchema([
    {
      typeDefs: subgraphTypeDefs(),
      resolvers: {
        ...sdlWorded(resolvers),
        Test: {
          ...testResolvers,
          // The loader answers null for a test the caller may not see (context.ts).
          __resolveReference: (reference: { correlationId: string }, { loaders }: GraphQLContext) => loaders.test.load(reference.correlationId),
        },
      } as never,
    },
  ]);
  capEntities(schema);
  return schema;
}

/** Caps `_entities` at the ids `tests(correlationIds:)` takes, with the same refusal. */
function capEntities(schema: GraphQLSchema): void {
  const field = schema.getQueryType()?.getFields()['_entities'];
  if (field === undefined) throw new Error('buildSubgraphSchema added no _entities field');
  const resolve = field.resolve as GraphQLFieldResolver<unknown, GraphQLContext>;
  field.resolve = (root, args: { representations?: unknown[] }, context, info) => {
    const count = Array.isArray(args.representations) ? args.representations.length : 0;
    if (count > MAX_IDS_PER_QUERY) {
      throw new ServiceError('BAD_USER_INPUT', `At most ${MAX_IDS_PER_QUERY} representations per query, got ${count}.`, {
        details: { argument: 'representations' },
      });
    }
    return resolve(root, args, context, info);
  };
}
