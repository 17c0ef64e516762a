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
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Link, type SpanContext } from '@opentelemetry/api';

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

/** A consumed record whose trace context says it is sampled. */
export interface SampledRecord {
  /** Its index among the chunk's messages. */
  readonly index: number;
  /** The context of the span that sent it (its parent, remote). */
  readonly parent: Context;
  readonly offset: string;
  readonly correlationId: string;
}

/**
 * The context a record's `traceparent` carries when its sampled flag is set; undefined (no span,
 * nothing remembered) when it carries none, or one whose trace is not sampled. The flag is read from
 * the header's text first, so that an unsampled record costs a string check, not an extraction.
 */
export function sampledParent(headers: Readonly<Record<string, string | undefined>>): Context | undefined {
  const traceparent = headers.traceparent;
  if (traceparent === undefined || !sampledFlag(traceparent)) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const parentSpan = trace.getSpanContext(parent);
  // Without an SDK the API's propagator extracts nothing: tracing is off.
  return parentSpan !== undefined && (parentSpan.traceFlags & TraceFlags.SAMPLED) !== 0 ? parent : undefined;
}

// `00-<trace id: 32>-<parent id: 16>-<flags: 2>`; later versions may append fields after the flags.
function sampledFlag(traceparent: string): boolean {
  return traceparent.length >= 55 && (Number.parseInt(traceparent.slice(53, 55), 16) & 1) === 1;
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
  const spans: ChunkStoreTrace[] = [];
  for (let from = 0; from < sampled.length; from += LINKS_PER_SPAN) {
    const span = startProcessSpan(chunk, sampled.slice(from, from + LINKS_PER_SPAN), messages);
    // Nothing is recorded when no SDK is running: nothing remembered either.
    if (span === undefined) return undefined;
    spans.push(span);
  }
  if (spans.length <= 1) return spans[0];
  return { end: (outcome) => spans.forEach((span) => span.end(outcome)) };
}

// The SDK's default limit of links per span (OTEL_SPAN_LINK_COUNT_LIMIT); links beyond it are dropped.
const LINKS_PER_SPAN = 128;

function startProcessSpan(chunk: ChunkCoordinates, sampled: readonly SampledRecord[], messages: readonly Keyed[]): ChunkStoreTrace | undefined {
  const attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.destination.name': chunk.topic,
    'messaging.destination.partition.id': String(chunk.partition),
    'messaging.batch.message_count': chunk.messages,
  };
  const span = tracer().startSpan(`process ${chunk.topic}`, { kind: SpanKind.CONSUMER, attributes }, (sampled[0] as SampledRecord).parent);
  if (!span.isRecording()) return undefined;
  const within = span.spanContext();
  const keys = sampled.map(({ index, parent }) => {
    const message = messages[index] as Keyed;
    const key = messageKey(message.correlationId, message.key);
    remember(key, { parent, chunk: within });
    return key;
  });
  return {
    end(outcome) {
      const outcomes = 'outcomes' in outcome ? outcome.outcomes : undefined;
      if ('error' in outcome) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) });
      // Links, with each record's outcome, once it is known; a sampler never sees them (it ran at the start).
      span.addLinks(
        sampled.map((record, i): Link => {
          const stateSaid = outcomes?.[record.index];
          // Only a message stored now is pushed now.
          if (stateSaid !== 'inserted' && recalled(keys[i] as string)?.chunk === within) forget(keys[i] as string);
          const linkAttributes: Attributes = { 'test.correlation_id': record.correlationId, 'messaging.kafka.offset': Number(record.offset) };
          if (stateSaid !== undefined) linkAttributes['store.outcome'] = stateSaid;
          return { context: trace.getSpanContext(record.parent) as SpanContext, attributes: linkAttributes };
        }),
      );
      span.end();
    },
  };
}

/** Where a stored sampled message's push span belongs. */
interface Origin {
  readonly parent: Context;
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
  const span = tracer().startSpan('push', { kind: SpanKind.INTERNAL, attributes: { 'test.correlation_id': message.correlationId }, links: [{ context: origin.chunk }] }, origin.parent);
  let subscribers = 0;
  return {
    reached: () => void (subscribers += 1),
    end() {
      span.setAttribute('push.subscribers', subscribers);
      span.end();
    },
  };
}
