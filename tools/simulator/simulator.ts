/**
 * A stand-in for the external system: it consumes the service's start requests and, for each one,
 * publishes a stream of result messages in the service's documented format, including the things a
 * real system does: deliberate duplicates (redeliveries), out-of-order arrivals, and a final message.
 * Deterministic, so tests can predict exactly what arrives.
 */
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';

/** Options of {@link createSimulator}. */
export interface SimulatorOptions {
  readonly brokers: readonly string[];
  readonly requestsTopic: string;
  readonly resultsTopic: string;
  readonly groupId?: string;
  readonly clientId?: string;
  /** Result messages before the final one. Default 5. */
  readonly steps?: number;
  /** Pause between messages. Default 200 ms. */
  readonly intervalMs?: number;
  /** Every Nth message is sent twice (same messageId and sequence). Default 3; 0 disables. */
  readonly duplicateEvery?: number;
  /** Every Nth pair of consecutive steps is sent swapped. Default 2; 0 disables. */
  readonly swapEvery?: number;
  /** Streams in flight at once; further requests wait. Default 100. */
  readonly maxConcurrent?: number;
  readonly logger?: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** The running simulator. */
export interface Simulator {
  start(): Promise<void>;
  /** Requests answered completely so far. */
  readonly handled: number;
  dispose(): Promise<void>;
}

/** Per-request overrides, read from the request's `input.parameters`. */
interface Plan {
  steps: number;
  intervalMs: number;
  fail: boolean;
  duplicateEvery: number;
  swapEvery: number;
}

/**
 * The order in which one test's messages are sent: steps 1..N with every `swapEvery`-th pair
 * swapped and every `duplicateEvery`-th send repeated, then the final message N+1 last.
 */
export function planSequence(steps: number, duplicateEvery: number, swapEvery: number): number[] {
  const order = Array.from({ length: steps }, (_, i) => i + 1);
  if (swapEvery > 0) {
    for (let pair = 0, i = 0; i + 1 < order.length; i += 2, pair += 1) {
      if ((pair + 1) % swapEvery === 0) [order[i], order[i + 1]] = [order[i + 1] as number, order[i] as number];
    }
  }
  const sends: number[] = [];
  order.forEach((seq, index) => {
    sends.push(seq);
    if (duplicateEvery > 0 && (index + 1) % duplicateEvery === 0) sends.push(seq);
  });
  sends.push(steps + 1);
  return sends;
}

/** Creates the simulator. */
export function createSimulator(options: SimulatorOptions): Simulator {
  const kafka = new Kafka({ clientId: options.clientId ?? 'result-simulator', brokers: [...options.brokers], logLevel: logLevel.ERROR });
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer: Consumer = kafka.consumer({ groupId: options.groupId ?? 'result-simulator', maxWaitTimeInMs: 100 });
  const log = options.logger;
  const maxConcurrent = options.maxConcurrent ?? 100;
  const streams = new Set<Promise<void>>();
  const abort = new AbortController();
  let handled = 0;
  let disposing: Promise<void> | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (abort.signal.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

  function planFor(input: unknown): Plan {
    const p = ((input as { parameters?: Record<string, unknown> } | null)?.parameters ?? {}) as Record<string, unknown>;
    const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d);
    return {
      steps: Math.min(int(p.steps, options.steps ?? 5), 10_000),
      intervalMs: int(p.intervalMs, options.intervalMs ?? 200),
      fail: p.fail === true,
      duplicateEvery: p.duplicates === false ? 0 : (options.duplicateEvery ?? 3),
      swapEvery: p.outOfOrder === false ? 0 : (options.swapEvery ?? 2),
    };
  }

  async function stream(correlationId: string, plan: Plan): Promise<void> {
    for (const sequence of planSequence(plan.steps, plan.duplicateEvery, plan.swapEvery)) {
      if (abort.signal.aborted) return;
      const final = sequence === plan.steps + 1;
      const value = final
        ? { correlationId, messageId: `${correlationId}:${sequence}`, sequence, final: true, status: plan.fail ? 'failed' : 'completed', payload: { summary: plan.fail ? 'failed' : 'all steps passed', passed: !plan.fail, steps: plan.steps }, producedAt: new Date().toISOString() }
        : { correlationId, messageId: `${correlationId}:${sequence}`, sequence, status: 'running', payload: { step: sequence, of: plan.steps, progress: sequence / plan.steps }, producedAt: new Date().toISOString() };
      await producer.send({
        topic: options.resultsTopic,
        messages: [{ key: correlationId, headers: { correlation_id: correlationId }, value: JSON.stringify(value) }],
      });
      if (!final) await sleep(plan.intervalMs);
    }
    handled += 1;
    log?.info({ correlationId, steps: plan.steps }, 'results published');
  }

  return {
    get handled() {
      return handled;
    },

    async start() {
      await producer.connect();
      await consumer.connect();
      await consumer.subscribe({ topic: options.requestsTopic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          let request: { correlationId?: unknown; input?: unknown };
          try {
            request = JSON.parse(String(message.value));
          } catch {
            log?.error({ offset: message.offset }, 'request is not JSON; skipped');
            return;
          }
          const correlationId = typeof request.correlationId === 'string' ? request.correlationId : message.headers?.correlation_id?.toString();
          if (!correlationId) return;
          while (streams.size >= maxConcurrent && !abort.signal.aborted) await Promise.race(streams);
          const running: Promise<void> = stream(correlationId, planFor(request.input))
            .catch((error: unknown) => log?.error({ err: error, correlationId }, 'publishing results failed'))
            .finally(() => streams.delete(running));
          streams.add(running);
        },
      });
    },

    dispose() {
      disposing ??= (async () => {
        abort.abort();
        await consumer.disconnect();
        await Promise.allSettled([...streams]);
        await producer.disconnect();
      })();
      return disposing;
    },
  };
}
