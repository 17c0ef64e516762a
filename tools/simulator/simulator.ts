/**
 * A stand-in for the external system: it consumes the service's test requests and, for each one,
 * publishes a stream of result messages in the service's accepted format, including what a real
 * system does to a consumer: redelivered duplicates, out-of-order arrivals, and a final message.
 * Everything is deterministic, so tests can predict exactly what arrives (see {@link planSequence}).
 */
import { Kafka, Partitioners, logLevel, type Consumer, type LogEntry, type Producer } from 'kafkajs';
// The service's workaround for kafkajs's negative request-queue timer (Node 24+ warns on each connection).
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';

/** Options of {@link createSimulator}. */
export interface SimulatorOptions {
  brokers: string[];
  requestsTopic: string;
  resultsTopic: string;
  /** Consumer group on the requests topic. Default 'result-simulator'. */
  groupId?: string;
  clientId?: string;
  /** Result messages before the final one. Default 5. Per request: `parameters.steps`. */
  steps?: number;
  /** Pause between two sends. Default 200 ms. Per request: `parameters.intervalMs`. */
  intervalMs?: number;
  /** Steps whose sequence is a multiple of this are sent twice in a row. Default 3; 0 disables. */
  duplicateEvery?: number;
  /** The pair (k, k+1) is sent as k+1, k when k is a multiple of this. Default 4; 0 disables. */
  swapEvery?: number;
  /** Result streams running at once; further requests wait for a slot. Default 100. */
  maxInFlight?: number;
  logger?: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** A simulator; call start() once and dispose() when done. */
export interface Simulator {
  /** Connects and joins the consumer group; resolves once requests are being consumed. */
  start(): Promise<void>;
  /** Stops consuming, cancels the streams in flight, disconnects. Safe to call twice. */
  dispose(): Promise<void>;
  /** Requests whose final message has been sent. */
  readonly handled: number;
}

/** What one request asks for, after its overrides are applied. */
export interface StreamPlan {
  steps: number;
  intervalMs: number;
  fail: boolean;
  duplicateEvery: number;
  swapEvery: number;
}

const MAX_STEPS = 10_000;
const MAX_INTERVAL_MS = 60_000;

/**
 * The sequences of one request's messages in the order they are sent: steps 1..steps, where the
 * pair (k, k+1) goes out as k+1, k whenever k is a multiple of `swapEvery` (pairs never overlap),
 * and a step whose sequence is a multiple of `duplicateEvery` is sent twice in a row; then the
 * final message, sequence steps+1, always last. E.g. (5, 3, 4) gives [1, 2, 3, 3, 5, 4, 6].
 */
export function planSequence(steps: number, duplicateEvery: number, swapEvery: number): number[] {
  const order: number[] = [];
  for (let k = 1; k <= steps; k++) {
    if (swapEvery > 0 && k % swapEvery === 0 && k < steps) {
      order.push(k + 1, k);
      k++;
    } else {
      order.push(k);
    }
  }
  const sends = order.flatMap((seq) => (duplicateEvery > 0 && seq % duplicateEvery === 0 ? [seq, seq] : [seq]));
  sends.push(steps + 1);
  return sends;
}

/** The plan for one request: the simulator's defaults, overridden by `input.parameters`. */
export function planFor(input: unknown, defaults: Omit<StreamPlan, 'fail'>): StreamPlan {
  const raw = isObject(input) && isObject(input.parameters) ? input.parameters : {};
  const int = (value: unknown, max: number, fallback: number) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max ? value : fallback;
  return {
    steps: int(raw.steps, MAX_STEPS, defaults.steps),
    intervalMs: int(raw.intervalMs, MAX_INTERVAL_MS, defaults.intervalMs),
    fail: raw.fail === true,
    duplicateEvery: raw.duplicates === false ? 0 : defaults.duplicateEvery,
    swapEvery: raw.outOfOrder === false ? 0 : defaults.swapEvery,
  };
}

/** Creates a simulator; nothing connects before start(). */
export function createSimulator(options: SimulatorOptions): Simulator {
  const log = options.logger;
  const defaults = {
    steps: options.steps ?? 5,
    intervalMs: options.intervalMs ?? 200,
    duplicateEvery: options.duplicateEvery ?? 3,
    swapEvery: options.swapEvery ?? 4,
  };
  const maxInFlight = Math.max(1, options.maxInFlight ?? 100);
  const kafka = new Kafka({
    clientId: options.clientId ?? 'result-simulator',
    brokers: [...options.brokers],
    logLevel: logLevel.ERROR,
    // With a logger given, kafkajs' own errors go to it instead of the console.
    ...(log
      ? {
          logCreator: () => (entry: LogEntry) => {
            const { message, timestamp: _timestamp, logger: _logger, ...fields } = entry.log;
            log.error({ namespace: entry.namespace, ...fields }, message);
          },
        }
      : {}),
  });
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  // A short fetch wait keeps disconnect() quick: kafkajs lets an empty fetch run out first.
  const consumer: Consumer = kafka.consumer({ groupId: options.groupId ?? 'result-simulator', maxWaitTimeInMs: 500 });

  // Cancellation wakes every pending sleep at once; a Set rather than AbortSignal listeners, which
  // warn beyond ten concurrent streams.
  let cancelled = false;
  const sleepers = new Set<() => void>();
  const cancelAll = () => {
    cancelled = true;
    for (const wake of sleepers) wake();
  };
  const streams = new Set<Promise<void>>();
  let handled = 0;
  let starting: Promise<void> | undefined;
  let disposing: Promise<void> | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (cancelled) return resolve();
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  async function runStream(correlationId: string, name: string | undefined, plan: StreamPlan, trace: Record<string, string>): Promise<void> {
    const sent = new Map<number, string>();
    const sends = planSequence(plan.steps, plan.duplicateEvery, plan.swapEvery);
    for (const [index, sequence] of sends.entries()) {
      if (index > 0) await sleep(plan.intervalMs);
      if (cancelled) return;
      // A duplicate is a redelivery: the very same bytes, producedAt included.
      const value = sent.get(sequence) ?? JSON.stringify(message(correlationId, name, sequence, plan));
      sent.set(sequence, value);
      await producer.send({
        topic: options.resultsTopic,
        messages: [{ key: correlationId, headers: { correlation_id: correlationId, ...trace }, value }],
      });
    }
    handled += 1;
    log?.info({ correlationId, steps: plan.steps, status: plan.fail ? 'failed' : 'completed', sent: sends.length }, 'results published');
  }

  async function onRequest(raw: { key: Buffer | null; value: Buffer | null; headers?: Record<string, unknown> }, heartbeat: () => Promise<void>) {
    let request: unknown;
    try {
      request = JSON.parse(raw.value?.toString('utf8') ?? '');
    } catch {
      log?.error({ key: raw.key?.toString() }, 'request is not JSON; skipped');
      return;
    }
    const header = raw.headers?.correlation_id;
    const correlationId =
      (isObject(request) && typeof request.correlationId === 'string' && request.correlationId) ||
      (Buffer.isBuffer(header) ? header.toString('utf8') : typeof header === 'string' ? header : '') ||
      raw.key?.toString('utf8');
    if (!correlationId) {
      log?.error({}, 'request has no correlation id; skipped');
      return;
    }
    const input = isObject(request) ? request.input : undefined;
    const plan = planFor(input, defaults);
    // The request's W3C trace context goes back on every result, as an instrumented system would do.
    const trace: Record<string, string> = {};
    for (const name of ['traceparent', 'tracestate']) {
      const value = raw.headers?.[name];
      if (Buffer.isBuffer(value) || typeof value === 'string') trace[name] = value.toString();
    }
    const name = isObject(input) && typeof input.name === 'string' ? input.name : undefined;

    // Bounded in flight: this holds the consumer (heartbeating) until a stream finishes.
    while (streams.size >= maxInFlight && !cancelled) {
      await Promise.race([...streams, sleep(2_000)]);
      await heartbeat().catch(() => {});
    }
    if (cancelled) return;
    log?.info({ correlationId, ...plan }, 'request received');
    const stream: Promise<void> = runStream(correlationId, name, plan, trace)
      .catch((error: unknown) => log?.error({ correlationId, err: String(error) }, 'publishing results failed'))
      .finally(() => streams.delete(stream));
    streams.add(stream);
  }

  return {
    get handled() {
      return handled;
    },

    start() {
      if (disposing) return Promise.reject(new Error('simulator was disposed'));
      starting ??= (async () => {
        await producer.connect();
        await consumer.connect();
        await consumer.subscribe({ topic: options.requestsTopic, fromBeginning: true });
        // kafkajs resolves run() once the group is joined and partitions are assigned.
        await consumer.run({ eachMessage: ({ message, heartbeat }) => onRequest(message, heartbeat) });
        log?.info({ requestsTopic: options.requestsTopic, resultsTopic: options.resultsTopic }, 'simulator consuming requests');
      })();
      return starting;
    },

    dispose() {
      disposing ??= (async () => {
        cancelAll();
        await starting?.catch(() => {});
        await consumer.disconnect();
        await Promise.allSettled([...streams]);
        await producer.disconnect();
      })();
      return disposing;
    },
  };
}

function message(correlationId: string, name: string | undefined, sequence: number, plan: StreamPlan) {
  const base = { correlationId, messageId: `${correlationId}:${sequence}`, sequence };
  if (sequence <= plan.steps) {
    const progress = Math.round((sequence / plan.steps) * 10_000) / 10_000;
    const note = `${name ?? 'test'}: step ${sequence} of ${plan.steps} done`;
    return { ...base, status: 'running', payload: { step: sequence, of: plan.steps, progress, note }, producedAt: new Date().toISOString() };
  }
  const summary = plan.fail ? `${name ?? 'test'} failed after ${plan.steps} steps` : `${name ?? 'test'}: all ${plan.steps} steps passed`;
  return { ...base, final: true, status: plan.fail ? 'failed' : 'completed', payload: { summary, passed: !plan.fail }, producedAt: new Date().toISOString() };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
