/** The executable schema: SDL from schema/*.graphql (the single source of truth) plus resolvers. */
import { readdirSync, readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers.js';

// From src/graphql/ and from dist/graphql/ alike, the SDL lives two levels up.
const SCHEMA_DIR = new URL('../../../schema/', import.meta.url);

/** Reads every `.graphql` file of schema/, in name order. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => readFileSync(new URL(name, SCHEMA_DIR), 'utf8'));
}

/** Builds the executable schema. Built once per process and shared by HTTP, WebSocket and SSE. */
export function createSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers: resolvers as never });
}
