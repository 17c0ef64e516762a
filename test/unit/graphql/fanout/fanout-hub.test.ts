/**
 * The fan-out hub: one execution and one serialization per event and distinct operation, whatever
 * the subscribers; pushes written synchronously in the call that stores a message; a subscriber
 * whose sink is full paused and caught up exactly; sources closed when subscribers leave. The
 * sinks are pure seams here (they record what they are handed); the transports' own sinks are
 * tested over real sockets in test/pipeline/.
 */
import { makeExecutableSchema } from '@graphql-tools/schema';
import { parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createChannel, type Channel } from '../../../../src/base/channel.js';
import { createSilentLogger } from '../../../../src/base/logger.js';
import { untilEnded } from '../../../../src/graphql/fanout/until-ended.js';
import { createFanoutHub, type HubSubscription } from '../../../../src/graphql/fanout/fanout-hub.js';
import type { PushSink, SharedResult } from '../../../../src/graphql/fanout/push-sink.js';
import { incoming } from '../../../log/storage-contract.js';
import { createTestPipeline } from '../../../support/pipeline.js';
import { testPrincipal } from '../../../support/principal.js';

/** A broadcast source: every subscriber gets the same event objects. */
function createBroadcast() {
  const channels = new Set<Channel<object>>();
  return {
    listeners: () => channels.size,
    publish: (event: object) => channels.forEach((channel) => channel.push(event)),
    fail: (error: Error) => channels.forEach((channel) => channel.fail(error)),
    end: () => channels.forEach((channel) => channel.end()),
    iterate(): AsyncIterableIterator<object> {
      const channel: Channel<object> = createChannel({ limit: 100, overflow: () => new Error('full'), onClose: () => channels.delete(channel) });
      channels.add(channel);
      return channel.iterator;
    },
  };
}

function setup() {
  const broadcast = createBroadcast();
  let executions = 0;
  const schema = makeExecutableSchema({
    typeDefs: `type Query { ok: Boolean }
      type Tick { value(scale: Int = 1): Int! slow: Int! }
      type Subscription { ticks: Tick! }`,
    resolvers: {
      Subscription: { ticks: { subscribe: () => broadcast.iterate(), resolve: (event: unknown) => event } },
      Tick: {
        value: (tick: { n: number }, { scale }: { scale: number }) => {
          executions += 1;
          return tick.n * scale;
        },
        // A field that reads something before it answers (as a selection that reads the store does).
        slow: async (tick: { n: number }) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return tick.n;
        },
      },
    },
  });
  return { broadcast, schema, executions: () => executions };
}

/** A sink that records what it is handed; `room` says how many more it takes before it is full. */
function recordingSink(room = Infinity) {
  const got: SharedResult[] = [];
  let resume: (() => void) | undefined;
  const sink: PushSink & { got: SharedResult[]; room: number; drain(): void } = {
    got,
    room,
    write(shared) {
      got.push(shared);
      sink.room -= 1;
      return sink.room > 0;
    },
    whenWritable: (then) => void (resume = then),
    drain() {
      sink.room = Infinity;
      const then = resume;
      resume = undefined;
      then?.();
    },
  };
  return sink;
}

const values = (sink: { got: SharedResult[] }) => sink.got.map((shared) => (shared.result.data?.ticks as { value: number }).value);
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function subscribed(hub: ReturnType<typeof createFanoutHub>, args: ExecutionArgs, sink: PushSink): Promise<HubSubscription> {
  const subscription = await hub.subscribe(args, sink);
  if (!('ended' in subscription)) throw new Error(`refused: ${JSON.stringify(subscription)}`);
  subscription.start();
  return subscription;
}

describe('the fan-out hub', () => {
  it('executes and serializes an event once for every subscriber of the same operation', async () => {
    const { broadcast, schema, executions } = setup();
    const hub = createFanoutHub({ logger: createSilentLogger() });
    const document = parse('subscription($s: Int) { ticks { value(scale: $s) } }');
    const sinks = Array.from({ length: 50 }, () => recordingSink());
    for (const sink of sinks) await subscribed(hub, { schema, document, variableValues: { s: 2 } }, sink);
    expect(broadcast.listeners()).toBe(50);
    broadcast.publish({ n: 21 });
    await tick();
    expect(sinks.map(values)).toEqual(Array(50).fill([42]));
    expect(executions()).toBe(1);
    // One result object for all of them, and one serialization.
    expect(new Set(sinks.map((sink) => sink.got[0]))).toHaveProperty('size', 1);
    expect(sinks[0]?.got[0]?.bytes()).toBe(sinks[49]?.got[0]?.bytes());
    expect(sinks[0]?.got[0]?.bytes().toString()).toBe('{"data":{"ticks":{"value":42}}}');
  });

  it('executes separately for different variables or documents', async () => {
    const { broadcast, schema, executions } = setup();
    const hub = createFanoutHub({ logger: createSilentLogger() });
    const document = parse('subscription($s: Int) { ticks { value(scale: $s) } }');
    const sinks = [recordingSink(), recordingSink(), recordingSink()];
    await subscribed(hub, { schema, document, variableValues: { s: 1 } }, sinks[0]!);
    await subscribed(hub, { schema, document, variableValues: { s: 3 } }, sinks[1]!);
    await subscribed(hub, { schema, document: parse('subscription { ticks { value } }') }, sinks[2]!);
    broadcast.publish({ n: 7 });
    await tick();
    expect(sinks.map(values)).toEqual([[7], [21], [7]]);
    expect(executions()).toBe(3);
  });

  it('follows each event with the observer once per turn, counting the subscribers it reaches', async () => {
    const { broadcast, schema } = setup();
    const ended: number[] = [];
    const reached = new Map<number, number>();
    const hub = createFanoutHub({
      logger: createSilentLogger(),
      observeEvent: (event) => {
        const n = (event as { n: number }).n;
        return { reached: () => void reached.set(n, (reached.get(n) ?? 0) + 1), end: () => void ended.push(n) };
      },
    });
    const document = parse('subscription { ticks { value } }');
    for (let i = 0; i < 2; i++) await subscribed(hub, { schema, document }, recordingSink());
    for (const n of [1, 2, 3]) {
      broadcast.publish({ n });
      await tick();
      await tick();
    }
    expect(ended).toEqual([1, 2, 3]);
    expect([...reached]).toEqual([
      [1, 2],
      [2, 2],
      [3, 2],
    ]);
  });

  it('writes the results still executing when its source ends before it says the subscription is over', async () => {
    const { broadcast, schema } = setup();
    const hub = createFanoutHub({ logger: createSilentLogger() });
    const sink = recordingSink();
    const subscription = await subscribed(hub, { schema, document: parse('subscription { ticks { slow } }') }, sink);
    for (const n of [1, 2, 3]) broadcast.publish({ n });
    broadcast.end();
    await subscription.ended;
    expect(sink.got.map((shared) => (shared.result.data?.ticks as { slow: number }).slow)).toEqual([1, 2, 3]);
  });

  it('closes the source when the transport leaves, and answers a refused subscription as a result', async () => {
    const { broadcast, schema } = setup();
    const hub = createFanoutHub({ logger: createSilentLogger() });
    const subscription = await subscribed(hub, { schema, document: parse('subscription { ticks { value } }') }, recordingSink());
    expect(broadcast.listeners()).toBe(1);
    // What graphql-ws waits on: its `return()` is the client leaving.
    const waiting = untilEnded(subscription).next();
    await untilEnded(subscription).return(undefined);
    expect(await waiting).toEqual({ value: undefined, done: true });
    await expect(subscription.ended).resolves.toBeUndefined();
    await tick();
    expect(broadcast.listeners()).toBe(0);
    // Leaving twice is harmless.
    subscription.leave();
    const refused = await hub.subscribe({ schema, document: parse('subscription { ticks { value } }'), operationName: 'Missing' }, recordingSink());
    expect('ended' in refused).toBe(false);
    expect((refused as ExecutionResult).errors?.[0]?.message).toMatch(/Unknown operation named "Missing"/);
  });
});

describe('the hub and its transports', () => {
  it('tells a transport a subscription is over through `ended`, and graphql-ws through the one iterator made from it', async () => {
    const { broadcast, schema } = setup();
    const hub = createFanoutHub({ logger: createSilentLogger() });
    const sink = recordingSink();
    const subscription = await subscribed(hub, { schema, document: parse('subscription { ticks { value } }') }, sink);
    const waiting = untilEnded(subscription).next();
    broadcast.publish({ n: 1 });
    await tick();
    // The results went to the sink, not through what the transport waits on.
    expect(values(sink)).toEqual([1]);
    broadcast.fail(new Error('the source broke'));
    await expect(subscription.ended).rejects.toThrow('the source broke');
    // graphql-ws's iterator throws it, which it answers with an `error` message.
    await expect(waiting).rejects.toThrow('the source broke');
    expect(broadcast.listeners()).toBe(0);
    // A failure no transport waited on is not an unhandled rejection.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      await subscribed(hub, { schema, document: parse('subscription { ticks { value } }') }, recordingSink());
      broadcast.fail(new Error('again'));
      await tick();
      await tick();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

describe('the fan-out hub over a follower', () => {
  const alice = testPrincipal();

  async function follow(id: string, sink: PushSink) {
    const { pipeline, log } = createTestPipeline();
    await log.create({ correlationId: id, owner: 'alice', input: null });
    const args = await pipeline.lifecycle.prepare({
      principal: alice,
      transport: 'websocket',
      params: { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id } },
    });
    if (Array.isArray(args)) throw args[0];
    return { log, hub: pipeline.hub, subscription: await subscribed(pipeline.hub, args, sink) };
  }
  const sequences = (sink: { got: SharedResult[] }) => sink.got.map((shared) => (shared.result.data?.testMessages as { sequence: number }).sequence);

  it('pushes a stored message in the very call that stores it, and ends the stream after the final one', async () => {
    const sink = recordingSink();
    const { log, hub, subscription } = await follow('t', sink);
    expect(hub.followers).toBe(1);
    void log.append([incoming('t', { sequence: 1 })]);
    // Synchronously: no await between the append's call and the push.
    expect(sequences(sink)).toEqual([1]);
    const ended = untilEnded(subscription).next();
    await log.append([incoming('t', { sequence: 2, final: true })]);
    expect(await ended).toEqual({ value: undefined, done: true });
    await expect(subscription.ended).resolves.toBeUndefined();
    expect(sequences(sink)).toEqual([1, 2]);
    expect(log.followers('t')).toBe(0);
    expect(hub.followers).toBe(0);
  });

  it('pauses a subscriber whose sink is full, holding nothing, and catches it up exactly once it drains', async () => {
    const sink = recordingSink(2);
    const { log, hub } = await follow('t', sink);
    await log.append([incoming('t', { sequence: 1 }), incoming('t', { sequence: 3 })]);
    expect(sequences(sink)).toEqual([1, 3]);
    // Paused: it follows no test, and is still one of the hub's subscriptions.
    expect(log.followers('t')).toBe(0);
    expect(hub.followers).toBe(1);
    await log.append([incoming('t', { sequence: 2 }), incoming('t', { sequence: 5 }), incoming('t', { sequence: 4 })]);
    expect(sequences(sink)).toEqual([1, 3]);
    sink.drain();
    await tick();
    expect(sequences(sink)).toEqual([1, 3, 2, 5, 4]);
    expect(log.followers('t')).toBe(1);
    await log.append([incoming('t', { sequence: 6 })]);
    expect(sequences(sink)).toEqual([1, 3, 2, 5, 4, 6]);
  });

  it('delivers to the live subscribers of one operation as a group: each message once to each, a full one paused and caught up while the rest go on', async () => {
    const { pipeline, log } = createTestPipeline();
    await log.create({ correlationId: 'g', owner: 'alice', input: null });
    const args = await pipeline.lifecycle.prepare({
      principal: alice,
      transport: 'websocket',
      params: { query: 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence } }', variables: { id: 'g' } },
    });
    if (Array.isArray(args)) throw args[0];
    const sinks = Array.from({ length: 20 }, () => recordingSink());
    // One of them fills up after 30 messages, until the test drains it.
    const slow = recordingSink(30);
    for (const sink of [...sinks, slow]) await subscribed(pipeline.hub, args, sink);
    await tick();
    for (let batch = 0; batch < 10; batch++) {
      await log.append(Array.from({ length: 10 }, (_, i) => incoming('g', { sequence: 10 * batch + i + 1 })));
      if (batch === 5) {
        // Paused: its group goes on without it, and nothing is held for it.
        expect(sequences(slow)).toHaveLength(30);
        expect(log.followers('g')).toBe(20);
        slow.drain();
        await tick();
      }
    }
    const all = Array.from({ length: 100 }, (_, i) => i + 1);
    for (const sink of sinks) expect(sequences(sink)).toEqual(all);
    await tick();
    expect(sequences(slow)).toEqual(all);
    expect(log.followers('g')).toBe(21);
    expect(pipeline.hub.followers).toBe(21);
  });
});
