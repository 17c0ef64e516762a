/**
 * kafkajs (2.2.4, unmaintained) checks each connection's request queue every millisecond for as
 * long as the connection lives, pending requests or not. The service's client checks only while
 * something is pending: an idle connection to a real broker (the mock cluster, over TCP) is not
 * polled, and requests held back by throttling or by the in-flight limit still leave.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkajsIdleQueuePatched } from '../../../src/ingest/kafkajs-idle-queue.js';
import { startMockCluster, type MockCluster } from '../../../tools/mock-cluster/mock-cluster.js';
import { runModuleScript } from '../../support/module-script.js';

const require = createRequire(import.meta.url);

let cluster: MockCluster;
beforeAll(async () => {
  cluster = await startMockCluster({ brokers: 1, topics: [{ name: 'idle-queue', partitions: 1 }] });
});
afterAll(() => cluster?.stop());

/**
 * In a process of its own (so that nothing else loaded decides which queue it gets): a producer
 * connects, sends a record and sits idle; answers how often its queues were checked while idle.
 */
async function checksWhileIdle(client: string): Promise<{ errorCode: number; checks: number; idleMs: number }> {
  const script = [
    client,
    "import { createRequire } from 'node:module';",
    "import { Partitioners } from 'kafkajs';",
    'const queue = createRequire(import.meta.url)("kafkajs/src/network/requestQueue/index.js").prototype;',
    'let checks = 0;',
    'const check = queue.checkPendingRequests;',
    'queue.checkPendingRequests = function () { checks++; return check.call(this); };',
    'const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });',
    'await producer.connect();',
    "const [sent] = await producer.send({ topic: 'idle-queue', messages: [{ value: '{}' }] });",
    'checks = 0;',
    'const from = performance.now();',
    'await new Promise((resolve) => setTimeout(resolve, 300));',
    'const idle = checks, idleMs = performance.now() - from;',
    'await producer.disconnect();',
    'console.log(JSON.stringify({ errorCode: sent.errorCode, checks: idle, idleMs }));',
  ].join('\n');
  const { stdout } = await runModuleScript(script);
  return JSON.parse(stdout.trim()) as { errorCode: number; checks: number; idleMs: number };
}

/** A request as kafkajs's connection pushes it. */
interface Pushed {
  readonly entry: { correlationId: number; apiKey: number; apiName: string; apiVersion: number; resolve(): void; reject(): void };
  readonly expectResponse: boolean;
  sendRequest(): void;
}
interface Queue {
  pending: unknown[];
  throttleCheckTimeoutId: unknown;
  push(request: Pushed): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
}
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const queue = (maxInFlightRequests: number | null) =>
  new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:1', logger: quiet });
const request = (correlationId: number, sent: number[]): Pushed => ({
  entry: { correlationId, apiKey: 0, apiName: 'Produce', apiVersion: 7, resolve: () => undefined, reject: () => undefined },
  expectResponse: true,
  sendRequest: () => void sent.push(correlationId),
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits (up to 2 s) for the queue's scheduled check to have run and left none behind; then a little more, to see none come back. */
async function settled(q: Queue): Promise<void> {
  for (let waited = 0; q.throttleCheckTimeoutId !== null && waited < 2_000; waited += 5) await sleep(5);
  await sleep(20);
}

describe("kafkajs's request queue, idle", () => {
  it('is replaced on the kafkajs release the workaround was written for', () => {
    expect(kafkajsIdleQueuePatched).toBe(true);
  });

  it("is checked about every millisecond by kafkajs's own queue (what the workaround removes)", async () => {
    const stock = await checksWhileIdle(
      [
        "import { Kafka, logLevel } from 'kafkajs';",
        // The negative-delay clamp alone, as the benchmarks' ceilings run kafkajs.
        "import './src/ingest/kafkajs-queue-timer.ts';",
        `const kafka = new Kafka({ brokers: ${JSON.stringify(cluster.bootstrapServers)}, clientId: 'idle-queue', logLevel: logLevel.NOTHING });`,
      ].join('\n'),
    );
    expect(stock.errorCode).toBe(0);
    // One check a millisecond on each connection; a loaded machine runs timers late, so a fifth of that.
    expect(stock.checks).toBeGreaterThan(stock.idleMs / 5);
  });

  it("is not checked at all while the service's client sits idle on a real broker", async () => {
    const service = await checksWhileIdle(
      [
        "import { createKafkaClient } from './src/ingest/kafka-client.ts';",
        "import { createSilentLogger } from './src/base/logger.ts';",
        `const kafka = createKafkaClient({ brokers: ${JSON.stringify(cluster.bootstrapServers)}, clientId: 'idle-queue' }, createSilentLogger());`,
      ].join('\n'),
    );
    expect(service.errorCode).toBe(0);
    expect(service.checks).toBe(0);
  });

  it('still sends what the in-flight limit held back, once a response frees a place, and then schedules nothing', async () => {
    const q = queue(1);
    const sent: number[] = [];
    q.push(request(1, sent));
    q.push(request(2, sent));
    expect(sent).toEqual([1]);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(sent).toEqual([1, 2]);
    q.fulfillRequest({ correlationId: 2, payload: Buffer.alloc(0), size: 0 });
    // The check kafkajs scheduled while request 2 waited runs once and schedules no other.
    await settled(q);
    expect(q.pending).toEqual([]);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends what the broker throttled, when the throttle ends, and then schedules nothing', async () => {
    const q = queue(null);
    const sent: number[] = [];
    q.maybeThrottle(40);
    q.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    // A late timer only sends it later: wait for it rather than for a fixed time.
    for (let waited = 0; sent.length === 0 && waited < 5_000; waited += 10) await sleep(10);
    expect(sent).toEqual([1]);
    await settled(q);
    expect(q.pending).toEqual([]);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });
});
