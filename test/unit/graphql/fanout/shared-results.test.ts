/**
 * The operation keys of the hub's shared results: equal for subscribers whose results are equal
 * for every event, and never equal across two hubs, whose passes may meet in one shared log.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSharedResults } from '../../../../src/graphql/fanout/shared-results.js';
import { createSchema } from '../../../../src/graphql/schema/schema.js';

describe('the keys of shared results', () => {
  const schema = createSchema();
  const args = (query: string, variableValues?: Record<string, unknown>) => ({ schema, document: parse(query), ...(variableValues ? { variableValues } : {}) });

  it('is equal for the same document and variables in one hub, and differs with the variables', () => {
    const results = createSharedResults();
    const first = args('subscription { testMessages(correlationId: "t") { sequence } }');
    expect(results.keyOf(first)).toBe(results.keyOf({ ...first }));
    const withVariables = args('subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', { id: 'a' });
    expect(results.keyOf(withVariables)).not.toBe(results.keyOf({ ...withVariables, variableValues: { id: 'b' } }));
  });

  it('never gives two hubs the same key for different documents (both the first each hub saw)', () => {
    const one = createSharedResults();
    const two = createSharedResults();
    const a = one.keyOf(args('subscription { testMessages(correlationId: "t") { sequence } }'));
    const b = two.keyOf(args('subscription { testMessages(correlationId: "t") { sequence payload } }'));
    expect(a).not.toBe(b);
  });
});
