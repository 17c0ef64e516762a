/**
 * W3C trace context across the broker, in the service's own code, with `@opentelemetry/api` only:
 * the API is a no-op until an SDK registers itself (start-telemetry.ts, loaded only when tracing is
 * configured), so every call here costs next to nothing when tracing is off.
 *
 * Where a trace goes: `startTest` (HTTP and GraphQL spans of the instrumentations) → `publish`
 * (the request record, whose headers carry the `traceparent`) → the external system → a result
 * record with a `traceparent` header → `process` (one span per attempt to store a chunk, linked to
 * each sampled record of it) → `push` (the execution of a subscription event that sends the stored
 * message to subscribers: a child of the record's sender, linked to the chunk's span). Records
 * without a `traceparent`, or whose trace is not sampled, get no spans of ours.
 *
 * The push span finds its parent through a bounded, process-local table from a stored message to
 * its record's context: the message is pushed by the process that stored it (the memory log, or
 * `SERVICE_ROLE=all` over Redis). A push in another process (split roles) has no such entry and
 * makes no span; the chunk's span is still linked to the trace.
 */
import {
  context,
  createTraceState,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';

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
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.destination.name': topic,
        'test.correlation_id': correlationId,
      },
    },
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

/** A consumed record whose trace context says it is sampled. */
export interface SampledRecord {
  /** Its index among the chunk's messages. */
  readonly index: number;
  /** Its W3C trace context headers, read when the chunk's span starts (not at all when tracing is off). */
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  readonly correlationId: string;
}

/**
 * Whether a record's `traceparent` header says its trace is sampled: a string check, so that the
 * other records cost nothing more (no span, no link, nothing remembered).
 */
export function carriesSampledTrace(traceparent: string | undefined): traceparent is string {
  // `00-<trace id: 32>-<parent id: 16>-<flags: 2>`; later versions may append fields after the flags.
  return traceparent !== undefined && traceparent.length >= 55 && (Number.parseInt(traceparent.slice(53, 55), 16) & TraceFlags.SAMPLED) !== 0;
}

/**
 * The sender's span context of a sampled record, read from its W3C headers as the service writes
 * them (trace-context's layout; the propagator API would build a context per record, which is
 * most of what a link costs); undefined when malformed.
 */
function senderOf(record: SampledRecord): SpanContext | undefined {
  const { traceparent, tracestate } = record;
  if (
    traceparent.startsWith('ff') ||
    traceparent[2] !== '-' ||
    traceparent[35] !== '-' ||
    traceparent[52] !== '-' ||
    (traceparent.length > 55 && traceparent[55] !== '-')
  )
    return undefined;
  if (traceparent.startsWith('00') && traceparent.length !== 55) return undefined;
  const sender: SpanContext = {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: Number.parseInt(traceparent.slice(53, 55), 16),
    isRemote: true,
  };
  if (tracestate !== undefined && tracestate !== '') sender.traceState = createTraceState(tracestate);
  return isSpanContextValid(sender) ? sender : undefined;
}

/** Where a chunk being stored came from, for its span. */
export interface ChunkCoordinates {
  readonly topic: string;
  readonly partition: number;
  /** Messages in the chunk, sampled or not. */
  readonly messages: number;
}

/** One attempt to store a chunk that holds sampled records. */
export interface ChunkStoreTrace {
  /** Ends the attempt with the log's outcome per message (`inserted`, `duplicate`, `over-limit`) or its error. */
  end(outcome: { outcomes: readonly string[] } | { error: unknown }): void;
}

type Keyed = { readonly correlationId: string; readonly key: string };

/**
 * Starts the `process` span of one attempt to store a chunk: one span per chunk however many of its
 * records are sampled (one per {@link LINKS_PER_SPAN} of them), linked to each sampled record's
 * sender (a batch `process` span with links, as OpenTelemetry's messaging conventions have it), so
 * that tracing costs per chunk, not per record. Its parent is the first sampled record's sender: a
 * span without a parent would be sampled as a new trace (1 in `OTEL_TRACES_SAMPLER_ARG`), losing
 * the chunks of sampled requests.
 *
 * Each sampled record's message is remembered for its `push` span (see {@link tracePush}), which
 * continues that record's own trace: the log may push it before the append returns.
 */
export function traceChunkStore(chunk: ChunkCoordinates, sampled: readonly SampledRecord[], messages: readonly Keyed[]): ChunkStoreTrace | undefined {
  const spans: ProcessSpan[] = [];
  let current: ProcessSpan | undefined;
  for (const record of sampled) {
    const sender = senderOf(record);
    if (sender === undefined) continue;
    if (current === undefined || current.full()) {
      current = startProcessSpan(chunk, sender);
      // Nothing is recorded when no SDK is running: no further header is read, nothing remembered.
      if (current === undefined) return undefined;
      spans.push(current);
    }
    current.add(record, sender, messages[record.index] as Keyed);
  }
  if (spans.length <= 1) return spans[0];
  return { end: (outcome) => spans.forEach((span) => span.end(outcome)) };
}

// The SDK's default limit of links per span (OTEL_SPAN_LINK_COUNT_LIMIT); links beyond it are dropped.
const LINKS_PER_SPAN = 128;

/** One `process` span and the sampled records it links to. */
interface ProcessSpan extends ChunkStoreTrace {
  full(): boolean;
  /** Remembers the record's message for its push span; its link is added when the span ends. */
  add(record: SampledRecord, sender: SpanContext, message: Keyed): void;
}

function startProcessSpan(chunk: ChunkCoordinates, parent: SpanContext): ProcessSpan | undefined {
  const attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.destination.name': chunk.topic,
    'messaging.destination.partition.id': String(chunk.partition),
    'messaging.batch.message_count': chunk.messages,
  };
  const span = tracer().startSpan(`process ${chunk.topic}`, { kind: SpanKind.CONSUMER, attributes }, trace.setSpanContext(ROOT_CONTEXT, parent));
  if (!span.isRecording()) return undefined;
  const within = span.spanContext();
  const linked: Array<{ readonly record: SampledRecord; readonly sender: SpanContext; readonly key: string }> = [];
  return {
    full: () => linked.length >= LINKS_PER_SPAN,
    add(record, sender, message) {
      const key = messageKey(message.correlationId, message.key);
      remember(key, { parent: sender, chunk: within });
      linked.push({ record, sender, key });
    },
    end(outcome) {
      const outcomes = 'outcomes' in outcome ? outcome.outcomes : undefined;
      if ('error' in outcome)
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) });
      // Links once the outcomes are known (a sampler never sees them: it ran at the start). A link is
      // what a sampled record costs, most of it in its export: it names the record's sender (whose
      // trace carries the correlation id) and nothing else, except an outcome other than `inserted`.
      let inserted = 0;
      span.addLinks(
        linked.map(({ record, sender, key }): Link => {
          const stateSaid = outcomes?.[record.index];
          if (stateSaid === 'inserted') {
            inserted += 1;
            return { context: sender };
          }
          // Only a message stored now is pushed now.
          if (recalled(key)?.chunk === within) forget(key);
          return stateSaid === undefined
            ? { context: sender }
            : { context: sender, attributes: { 'store.outcome': stateSaid, 'test.correlation_id': record.correlationId } };
        }),
      );
      if (outcomes !== undefined) span.setAttribute('store.inserted', inserted);
      span.end();
    },
  };
}

/** Where a stored sampled message's push span belongs. */
interface Origin {
  readonly parent: SpanContext;
  readonly chunk: SpanContext;
}

// The origins of recently stored sampled messages, in two generations of up to STORED_LIMIT each:
// when the newer is full the older is dropped whole. Evicting the oldest entry of one Map one by
// one (`keys().next()` after deletes) walks the deleted slots at its head each time, which cost
// more than the spans themselves at tens of thousands of records a second.
let stored = new Map<string, Origin>();
let older = new Map<string, Origin>();
const STORED_LIMIT = 10_000;

function remember(key: string, origin: Origin): void {
  if (stored.size >= STORED_LIMIT) {
    older = stored;
    stored = new Map();
  }
  stored.set(key, origin);
}

function recalled(key: string): Origin | undefined {
  return stored.get(key) ?? older.get(key);
}

function forget(key: string): void {
  stored.delete(key);
  older.delete(key);
}
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
  if (stored.size === 0 && older.size === 0) return undefined;
  const message = event as { correlationId?: unknown; key?: unknown } | null;
  if (typeof message?.correlationId !== 'string' || typeof message.key !== 'string') return undefined;
  const origin = recalled(messageKey(message.correlationId, message.key));
  if (origin === undefined) return undefined;
  const span = tracer().startSpan(
    'push',
    { kind: SpanKind.INTERNAL, attributes: { 'test.correlation_id': message.correlationId }, links: [{ context: origin.chunk }] },
    trace.setSpanContext(ROOT_CONTEXT, origin.parent),
  );
  let subscribers = 0;
  return {
    reached: () => void (subscribers += 1),
    end() {
      span.setAttribute('push.subscribers', subscribers);
      span.end();
    },
  };
}
