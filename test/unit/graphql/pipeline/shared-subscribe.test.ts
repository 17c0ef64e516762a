import { parse, type ExecutionResult } from 'graphql';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { describe, expect, it } from 'vitest';
import { createSharedSubscribe } from '../../../../src/graphql/pipeline/shared-subscribe.js';
import { createSilentLogger } from '../../../../src/base/logger.js';

/** A broadcast source: every listener gets the same event objects, as from the service's PubSub. */
function createBroadcast() {
  const queues = new Set<{ push(value: object): void; closed: boolean }>();
  return {
    listeners: () => queues.size,
    publish(event: object) {
      for (const queue of queues) queue.push(event);
    },
    iterate(): AsyncIterableIterator<object> {
      const pending: object[] = [];
      let wake: ((result: IteratorResult<object>) => void) | undefined;
      const queue = {
        closed: false,
        push(value: object) {
          if (wake !== undefined) {
            const resolve = wake;
            wake = undefined;
            resolve({ value, done: false });
          } else pending.push(value);
        },
      };
      queues.add(queue);
      const iterator: AsyncIterableIterator<object> = {
        next: () => (pending.length > 0 ? Promise.resolve({ value: pending.shift() as object, done: false }) : new Promise((resolve) => (wake = resolve))),
        return: () => {
          queues.delete(queue);
          wake?.({ value: undefined, done: true });
          return Promise.resolve({ value: undefined, done: true });
        },
        [Symbol.asyncIterator]: () => iterator,
      };
      return iterator;
    },
  };
}

function setup() {
  const broadcast = createBroadcast();
  let executions = 0;
  const schema = makeExecutableSchema({
    typeDefs: `type Query { ok: Boolean }
      type Tick { value(scale: Int = 1): Int! }
      type Subscription { ticks: Tick! }`,
    resolvers: {
      Subscription: { ticks: { subscribe: () => broadcast.iterate(), resolve: (event: unknown) => event } },
      Tick: {
        value: (tick: { n: number }, { scale }: { scale: number }) => {
          executions += 1;
          return tick.n * scale;
        },
      },
    },
  });
  return { broadcast, schema, executions: () => executions };
}

const next = async (iterator: AsyncIterableIterator<ExecutionResult> | ExecutionResult) =>
  (await (iterator as AsyncIterableIterator<ExecutionResult>).next()).value as ExecutionResult;

describe('shared subscription execution', () => {
  it('executes an event once for every subscriber of the same operation, and each gets the result', async () => {
    const { broadcast, schema, executions } = setup();
    const subscribe = createSharedSubscribe({ logger: createSilentLogger() });
    const document = parse('subscription($s: Int) { ticks { value(scale: $s) } }');
    const subscribers = await Promise.all(Array.from({ length: 50 }, () => subscribe({ schema, document, variableValues: { s: 2 } })));
    expect(broadcast.listeners()).toBe(50);

    const pending = subscribers.map(next);
    broadcast.publish({ n: 21 });
    const results = await Promise.all(pending);
    expect(results.every((r) => r.data?.ticks && (r.data.ticks as { value: number }).value === 42)).toBe(true);
    expect(executions()).toBe(1);

    const again = subscribers.map(next);
    broadcast.publish({ n: 5 });
    expect((await Promise.all(again)).map((r) => (r.data?.ticks as { value: number }).value)).toEqual(Array(50).fill(10));
    expect(executions()).toBe(2);
  });

  it('executes separately for different variables or documents', async () => {
    const { broadcast, schema, executions } = setup();
    const subscribe = createSharedSubscribe({ logger: createSilentLogger() });
    const document = parse('subscription($s: Int) { ticks { value(scale: $s) } }');
    const a = await subscribe({ schema, document, variableValues: { s: 1 } });
    const b = await subscribe({ schema, document, variableValues: { s: 3 } });
    const c = await subscribe({ schema, document: parse('subscription { ticks { value } }') });
    const pending = [a, b, c].map(next);
    broadcast.publish({ n: 7 });
    expect((await Promise.all(pending)).map((r) => (r.data?.ticks as { value: number }).value)).toEqual([7, 21, 7]);
    expect(executions()).toBe(3);
  });

  it('gives a subscriber that reads an event late the right result', async () => {
    const { broadcast, schema, executions } = setup();
    const subscribe = createSharedSubscribe({ logger: createSilentLogger() });
    const document = parse('subscription { ticks { value } }');
    const eager = await subscribe({ schema, document });
    const late = await subscribe({ schema, document });
    const first = next(eager);
    broadcast.publish({ n: 1 });
    await first;
    broadcast.publish({ n: 2 });
    // The late subscriber reads both events after the turn in which they were published.
    await new Promise((resolve) => setImmediate(resolve));
    expect((await next(late)).data).toEqual({ ticks: { value: 1 } });
    expect((await next(late)).data).toEqual({ ticks: { value: 2 } });
    expect(executions()).toBeGreaterThanOrEqual(2);
  });

  it('follows each event with the observer once per turn, counting the subscribers it reaches', async () => {
    const { broadcast, schema, executions } = setup();
    const ended: number[] = [];
    const reached = new Map<number, number>();
    const subscribe = createSharedSubscribe({
      logger: createSilentLogger(),
      observeEvent: (event) => {
        const n = (event as { n: number }).n;
        return { reached: () => void reached.set(n, (reached.get(n) ?? 0) + 1), end: () => void ended.push(n) };
      },
    });
    const document = parse('subscription { ticks { value } }');
    const subscribers = await Promise.all([subscribe({ schema, document }), subscribe({ schema, document })]);
    for (const n of [1, 2, 3]) {
      const pending = subscribers.map(next);
      broadcast.publish({ n });
      expect((await Promise.all(pending)).map((r) => (r.data?.ticks as { value: number }).value)).toEqual([n, n]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(ended).toEqual([1, 2, 3]);
    expect([...reached]).toEqual([
      [1, 2],
      [2, 2],
      [3, 2],
    ]);
    expect(executions()).toBe(3);
  });

  it('closes the source when the subscriber returns, and passes errors of the source stream through', async () => {
    const { broadcast, schema } = setup();
    const subscribe = createSharedSubscribe({ logger: createSilentLogger() });
    const iterator = (await subscribe({ schema, document: parse('subscription { ticks { value } }') })) as AsyncIterableIterator<ExecutionResult>;
    expect(broadcast.listeners()).toBe(1);
    await iterator.return?.();
    expect(broadcast.listeners()).toBe(0);

    const refused = await subscribe({ schema, document: parse('subscription { ticks { value } }'), variableValues: {}, operationName: 'Missing' });
    expect(Symbol.asyncIterator in refused).toBe(false);
    expect((refused as ExecutionResult).errors?.[0]?.message).toMatch(/Unknown operation named "Missing"/);
  });
});
