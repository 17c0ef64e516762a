/**
 * The operation keys of the hub's shared results: equal for subscribers whose results are equal
 * for every event, and never equal across two hubs, whose passes may meet in one shared log; and
 * how long a result is shared: for as long as its event is asked for in a row, no longer.
 */
import { parse } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
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

describe('how long a shared result lasts', () => {
  const schema = createSchema();
  const args = { schema, document: parse('subscription { testMessages(correlationId: "t-1") { sequence } }') };
  const message = (sequence: number) => ({
    correlationId: 't-1',
    key: `s:${sequence}`,
    messageId: null,
    sequence,
    status: null,
    final: false,
    payload: 1,
    producedAt: null,
    receivedAt: 0,
    arrival: sequence,
  });

  it('shares one result among the subscribers of an event delivered in a row, and lets it go at the next event', async () => {
    const results = createSharedResults();
    const key = results.keyOf(args);
    const [a, b] = [message(1), message(2)];
    const first = results.get(a, args, key);
    expect(results.get(a, args, key)).toBe(first);
    const second = results.get(b, args, key);
    expect(second).not.toBe(first);
    // Asked for again (a subscriber catching up): executed again, to the same result.
    const again = await results.get(a, args, key);
    expect(again).not.toBe(first);
    expect(again.result).toEqual((await first).result);
    expect((await second).result).toEqual({ data: { testMessages: { sequence: 2 } } });
  });

  it('has the lifecycle observe an event once a turn, counting every subscriber it reaches, even when it comes back', async () => {
    const observers = new Map<unknown, { reached: number; ended: number }>();
    const observe = vi.fn((event: unknown) => {
      const counts = { reached: 0, ended: 0 };
      observers.set(event, counts);
      return { reached: () => void (counts.reached += 1), end: () => void (counts.ended += 1) };
    });
    const results = createSharedResults(observe);
    const key = results.keyOf(args);
    const [a, b] = [message(1), message(2)];
    await results.get(a, args, key, 2);
    await results.get(b, args, key);
    await results.get(a, args, key);
    expect(observe).toHaveBeenCalledTimes(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(observers.get(a)).toEqual({ reached: 3, ended: 1 });
    expect(observers.get(b)).toEqual({ reached: 1, ended: 1 });
  });
});
