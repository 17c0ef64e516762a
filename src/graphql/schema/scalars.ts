/** Custom scalars of the schema. */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { JSONResolver } from 'graphql-scalars';

/** Arbitrary JSON, passed through as received. */
export const JSONScalar = JSONResolver;

/** Instants: held as epoch milliseconds inside, ISO 8601 strings outside. */
export const DateTimeScalar = new GraphQLScalarType<number, string>({
  name: 'DateTime',
  serialize(value) {
    const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : (value as number);
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new GraphQLError(`DateTime cannot represent ${String(value)}`);
    return new Date(ms).toISOString();
  },
  parseValue(value) {
    const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms)) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return ms;
  },
  parseLiteral(ast) {
    const ms = ast.kind === Kind.STRING ? Date.parse(ast.value) : Number.NaN;
    if (Number.isNaN(ms)) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return ms;
  },
});
