/**
 * The simulated external system against a real (mock) broker: requests produced the way the
 * service produces them, results read back from the results topic in arrival order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';
import { startMockCluster, type MockCluster } from '../../tools/mock-cluster/mock-cluster.js';
import { createSimulator, planSequence, type Simulator } from '../../tools/simulator/simulator.js';

const suffix = randomUUID().slice(0, 8);
const topics = {
  requests: `sim-requests-${suffix}`,
  results: `sim-results-${suffix}`,
  // The bounded simulator has topics of its own; one results partition keeps arrival = send order.
  boundedRequests: `sim-bounded-requests-${suffix}`,
  boundedResults: `sim-bounded-results-${suffix}`,
};
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Arrival {
  topic: string;
  key: string;
  header: string;
  raw: string;
  value: Record<string, any>;
}

let cluster: MockCluster;
let simulator: Simulator;
let bounded: Simulator;
let producer: Producer;
let collector: Consumer;
const arrivals: Arrival[] = [];
const errors: string[] = [];

async function eventually<T>(probe: () => T | false | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Produces a request exactly as the service does. */
async function request(correlationId: string, input: { name?: string; parameters?: object } | null, topic = topics.requests) {
  await producer.send({
    topic,
    messages: [
      {
        key: correlationId,
        headers: { correlation_id: correlationId },
        value: JSON.stringify({ correlationId, input, requestedAt: new Date().toISOString() }),
      },
    ],
  });
}

const of = (id: string) => arrivals.filter((a) => a.key === id);
/** Everything that arrived for `id`, once its final message is in (the final is always last). */
const stream = (id: string) => eventually(() => of(id).some((a) => a.value.final) && of(id), 20_000, `the final message of ${id}`);
const sequences = (list: Arrival[]) => list.map((a) => a.value.sequence as number);

beforeAll(async () => {
  cluster = await startMockCluster({
    brokers: 1,
    topics: [
      { name: topics.requests, partitions: 2 },
      { name: topics.results, partitions: 3 },
      { name: topics.boundedRequests, partitions: 1 },
      { name: topics.boundedResults, partitions: 1 },
    ],
  });
  const brokers = cluster.bootstrapServers;
  simulator = createSimulator({
    brokers,
    requestsTopic: topics.requests,
    resultsTopic: topics.results,
    groupId: `simulator-${suffix}`,
    intervalMs: 20,
    logger: { info: () => {}, error: (_obj, msg) => errors.push(msg ?? '') },
  });
  bounded = createSimulator({
    brokers,
    requestsTopic: topics.boundedRequests,
    resultsTopic: topics.boundedResults,
    groupId: `bounded-${suffix}`,
    steps: 2,
    intervalMs: 50,
    maxInFlight: 2,
  });
  const kafka = new Kafka({ clientId: 'simulator-test', brokers, logLevel: logLevel.NOTHING });
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  collector = kafka.consumer({ groupId: `collector-${suffix}`, maxWaitTimeInMs: 100 });
  const collecting = (async () => {
    await collector.connect();
    await collector.subscribe({ topics: [topics.results, topics.boundedResults], fromBeginning: true });
    await collector.run({
      eachMessage: async ({ topic, message }) => {
        const raw = String(message.value);
        arrivals.push({ topic, key: String(message.key), header: String(message.headers?.correlation_id), raw, value: JSON.parse(raw) });
      },
    });
  })();
  // Each consumer group join takes about 3 s on the mock cluster; do all three at once.
  await Promise.all([simulator.start(), bounded.start(), producer.connect(), collecting]);
});

afterAll(async () => {
  await Promise.all([simulator?.dispose(), bounded?.dispose(), collector?.disconnect()]);
  await producer?.disconnect();
  await cluster?.stop();
});

describe('planSequence', () => {
  it('swaps the pair starting at every swapEvery-th step, repeats every duplicateEvery-th step, final last', () => {
    expect(planSequence(5, 3, 4)).toEqual([1, 2, 3, 3, 5, 4, 6]);
    expect(planSequence(10, 3, 4)).toEqual([1, 2, 3, 3, 5, 4, 6, 6, 7, 9, 9, 8, 10, 11]);
    expect(planSequence(4, 0, 4)).toEqual([1, 2, 3, 4, 5]); // step 4 has no partner to swap with
    expect(planSequence(4, 1, 1)).toEqual([2, 2, 1, 1, 4, 4, 3, 3, 5]);
    expect(planSequence(5, 0, 0)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(planSequence(0, 3, 4)).toEqual([1]);
  });
});

describe('simulator', () => {
  it('answers a request with the default stream, in the exact accepted format', async () => {
    const id = `default-${randomUUID()}`;
    await request(id, { name: 'demo', parameters: {} });
    const got = await stream(id);

    // Steps 1..5: step 3 twice in a row (a redelivery), steps 4 and 5 swapped, then the final 6.
    expect(sequences(got)).toEqual([1, 2, 3, 3, 5, 4, 6]);
    for (const a of got) {
      expect(a.topic).toBe(topics.results);
      expect(a.header).toBe(id);
    }
    expect(got[0]?.value).toEqual({
      correlationId: id,
      messageId: `${id}:1`,
      sequence: 1,
      status: 'running',
      payload: { step: 1, of: 5, progress: 0.2, note: 'demo: step 1 of 5 done' },
      producedAt: expect.stringMatching(ISO),
    });
    expect(got[4]?.value).toMatchObject({ messageId: `${id}:5`, sequence: 5, payload: { step: 5, of: 5, progress: 1 } });
    // The duplicate is byte for byte the same record.
    expect(got[3]?.raw).toBe(got[2]?.raw);
    expect(got.at(-1)?.value).toEqual({
      correlationId: id,
      messageId: `${id}:6`,
      sequence: 6,
      final: true,
      status: 'completed',
      payload: { summary: 'demo: all 5 steps passed', passed: true },
      producedAt: expect.stringMatching(ISO),
    });
    const times = got.map((a) => Date.parse(a.value.producedAt));
    expect([...times].sort((x, y) => x - y)).toEqual(times.map((_, i) => times[i]));
  });

  it('applies per-request steps, and takes a null input as the defaults', async () => {
    const ten = `ten-${randomUUID()}`;
    const plain = `null-${randomUUID()}`;
    await Promise.all([request(ten, { parameters: { steps: 10 } }), request(plain, null)]);
    expect(sequences(await stream(ten))).toEqual(planSequence(10, 3, 4));
    expect(sequences(await stream(ten))).toEqual([1, 2, 3, 3, 5, 4, 6, 6, 7, 9, 9, 8, 10, 11]);
    expect(sequences(await stream(plain))).toEqual([1, 2, 3, 3, 5, 4, 6]);
    expect((await stream(plain)).at(-1)?.value.payload).toEqual({ summary: 'test: all 5 steps passed', passed: true });
  });

  it('fail: true ends with status "failed"; duplicates and outOfOrder false give a clean stream', async () => {
    const id = `fail-${randomUUID()}`;
    await request(id, { name: 'broken', parameters: { steps: 3, fail: true, duplicates: false, outOfOrder: false } });
    const got = await stream(id);
    expect(sequences(got)).toEqual([1, 2, 3, 4]);
    expect(got.map((a) => a.value.status)).toEqual(['running', 'running', 'running', 'failed']);
    expect(got.at(-1)?.value).toMatchObject({ final: true, status: 'failed', payload: { summary: 'broken failed after 3 steps', passed: false } });
  });

  it('waits intervalMs between sends, as the request asks', async () => {
    const id = `slow-${randomUUID()}`;
    await request(id, { parameters: { steps: 2, intervalMs: 300 } });
    const times = (await stream(id)).map((a) => Date.parse(a.value.producedAt));
    expect(times).toHaveLength(3);
    // Timers may fire a millisecond early relative to the wall clock.
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(295);
    expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(295);
  });

  it('runs many requests concurrently rather than one after another', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `many-${i}-${randomUUID()}`);
    const handledBefore = simulator.handled;
    await producer.send({
      topic: topics.requests,
      messages: ids.map((id) => ({
        key: id,
        headers: { correlation_id: id },
        value: JSON.stringify({ correlationId: id, input: { parameters: { steps: 2, intervalMs: 400 } }, requestedAt: new Date().toISOString() }),
      })),
    });
    const streams = await Promise.all(ids.map(stream));
    for (const got of streams) expect(sequences(got)).toEqual([1, 2, 3]);
    // Each stream takes at least 800 ms; run one after another, no first message would come
    // after another stream's final. Run together, every stream starts before any one finishes.
    const lastStart = Math.max(...streams.map((got) => Date.parse(got[0]?.value.producedAt)));
    const firstEnd = Math.min(...streams.map((got) => Date.parse(got.at(-1)?.value.producedAt)));
    expect(lastStart).toBeLessThan(firstEnd);
    await eventually(() => simulator.handled - handledBefore === 40, 5_000, 'handled to count 40 more');
  });

  it('keeps at most maxInFlight streams running; further requests wait for a slot', async () => {
    const ids = Array.from({ length: 5 }, (_, i) => `bounded-${i}-${randomUUID()}`);
    for (const id of ids) await request(id, { parameters: {} }, topics.boundedRequests);
    await Promise.all(ids.map(stream));
    // One results partition: arrival order is the order the simulator sent in.
    const log = arrivals.filter((a) => a.topic === topics.boundedResults && ids.includes(a.key));
    let active = 0;
    let peak = 0;
    for (const a of log) {
      if (a.value.sequence === 1) active += 1;
      if (a.value.final) active -= 1;
      peak = Math.max(peak, active);
    }
    expect(peak).toBe(2);
    expect(bounded.handled).toBe(5);
  });

  it('skips records that are not requests and keeps answering', async () => {
    await producer.send({ topic: topics.requests, messages: [{ value: 'not json' }, { value: JSON.stringify({ input: null }) }] });
    const id = `after-junk-${randomUUID()}`;
    await request(id, { parameters: { steps: 1 } });
    expect(sequences(await stream(id))).toEqual([1, 2]);
    expect(errors).toContain('request is not JSON; skipped');
    expect(errors).toContain('request has no correlation id; skipped');
  });

  it('dispose() cancels the streams in flight promptly, and is safe twice', async () => {
    const id = `cancelled-${randomUUID()}`;
    await request(id, { parameters: { steps: 100, intervalMs: 100 } });
    await eventually(() => of(id).length >= 2, 10_000, 'the stream to be under way');
    const handledBefore = simulator.handled;
    const started = Date.now();
    await Promise.all([simulator.dispose(), simulator.dispose()]);
    expect(Date.now() - started).toBeLessThan(5_000);
    const count = of(id).length;
    await new Promise((r) => setTimeout(r, 400));
    expect(of(id).length).toBe(count);
    expect(of(id).some((a) => a.value.final)).toBe(false);
    expect(simulator.handled).toBe(handledBefore);
    await expect(simulator.start()).rejects.toThrow(/disposed/);
  });
});
