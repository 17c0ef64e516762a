/**
 * W3C trace context across the broker, in the service's own code, with `@opentelemetry/api` only:
 * the API is a no-op until an SDK registers itself (start-telemetry.ts, loaded only when tracing is
 * configured), so every call here costs next to nothing when tracing is off.
 *
 * Where a trace goes: `startTest` (HTTP and GraphQL spans of the instrumentations) → `publish`
 * (the request record, whose headers carry the `traceparent`) → the external system → a result
 * record with a `traceparent` header → `consume` (child of the record's context) → `store` (the
 * append that took it) → `push` (the execution of a subscription event that sends it to
 * subscribers). Records without a `traceparent` get no spans of ours.
 *
 * The push span finds its parent through a bounded, process-local table from a stored message to
 * its store span's context: the message is pushed by the process that stored it (the memory log,
 * or `SERVICE_ROLE=all` over Redis). A push in another process (split roles) has no such entry and
 * makes no span; the consume and store spans are still in the trace.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';

/** The instrumentation scope of the service's own spans. */
export const TRACER_NAME = 'result-collection-service';

const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * Runs `send` in a producer span for a record to `topic`, after writing the span's context into
 * `headers` (`traceparent`, and `tracestate` when there is one).
 */
export async function withPublishSpan<T>(topic: string, correlationId: string, headers: Record<string, string>, send: () => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(
    `publish ${topic}`,
    { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'kafka', 'messaging.operation.type': 'send', 'messaging.destination.name': topic, 'test.correlation_id': correlationId } },
    async (span) => {
      propagation.inject(context.active(), headers);
      try {
        return await send();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Where a consumed record came from, for its span. */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** The spans of one traced record while it is stored. */
export interface RecordTrace {
  /**
   * Starts the `store` span of one attempt to store the record's message. The message's push span
   * can find it from now on: the log may push it before the append returns.
   */
  storing(message: { readonly correlationId: string; readonly key: string }): StoreTrace;
}

/** One attempt to store a traced record. */
export interface StoreTrace {
  /** Ends the attempt with the log's outcome (`inserted`, `duplicate`, `over-limit`) or its error. */
  end(outcome: { outcome: string } | { error: unknown }): void;
}

/** The `consume` span of a record that carries a `traceparent` header, or undefined (no span) when it carries none. */
export function traceConsumed(record: ConsumedRecord, correlationId: string): RecordTrace | undefined {
  if (record.headers.traceparent === undefined) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, record.headers);
  const consume = tracer().startSpan(
    `consume ${record.topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': record.topic,
        'messaging.destination.partition.id': String(record.partition),
        'messaging.kafka.offset': Number(record.offset),
        'test.correlation_id': correlationId,
      },
    },
    parent,
  );
  // Nothing is recorded when no SDK is running: no further spans, and nothing remembered.
  if (!consume.isRecording()) return undefined;
  const within = trace.setSpan(parent, consume);
  return {
    storing(message) {
      const store = tracer().startSpan('store', { kind: SpanKind.INTERNAL, attributes: { 'test.correlation_id': correlationId } }, within);
      const key = messageKey(message.correlationId, message.key);
      const remembered = trace.setSpan(ROOT_CONTEXT, store);
      if (stored.size >= STORED_LIMIT) stored.delete(stored.keys().next().value as string);
      stored.set(key, remembered);
      return {
        end(outcome) {
          const inserted = 'outcome' in outcome && outcome.outcome === 'inserted';
          if ('error' in outcome) store.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) });
          else store.setAttribute('store.outcome', outcome.outcome);
          // Only a message stored now is pushed now.
          if (!inserted && stored.get(key) === remembered) stored.delete(key);
          store.end();
          // A record is consumed once, however often storing it is tried.
          if (consume.isRecording()) consume.end();
        },
      };
    },
  };
}

// Store span contexts of recently stored traced messages, oldest first (a Map keeps insertion order).
const stored = new Map<string, Context>();
const STORED_LIMIT = 10_000;
const messageKey = (correlationId: string, key: string) => `${correlationId}\u0000${key}`;

/** A `push` span under way: counts the subscribers it reaches, and ends. */
export interface PushTrace {
  reached(): void;
  end(): void;
}

/**
 * The `push` span of a subscription event, when the event is a stored message whose record was
 * traced by this process; undefined otherwise (the common case: one map lookup).
 */
export function tracePush(event: unknown): PushTrace | undefined {
  if (stored.size === 0) return undefined;
  const message = event as { correlationId?: unknown; key?: unknown } | null;
  if (typeof message?.correlationId !== 'string' || typeof message.key !== 'string') return undefined;
  const parent = stored.get(messageKey(message.correlationId, message.key));
  if (parent === undefined) return undefined;
  const span = tracer().startSpan('push', { kind: SpanKind.INTERNAL, attributes: { 'test.correlation_id': message.correlationId } }, parent);
  let subscribers = 0;
  return {
    reached: () => void (subscribers += 1),
    end() {
      span.setAttribute('push.subscribers', subscribers);
      span.end();
    },
  };
}
