/**
 * The OpenTelemetry SDK: the only file that loads it and its instrumentations. main.ts imports this
 * file (dynamically) only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, before it imports the rest of
 * the service, so that nothing of the SDK is loaded when tracing is off, and so that the modules
 * the instrumentations patch (http, express, graphql, kafkajs, ioredis) are loaded after their
 * hooks are in place.
 *
 * The service is ESM: its `import`s of those packages go through Node's ESM loader, which
 * `require` hooks never see. The import-in-the-middle loader hook is registered here (with
 * `module.register`), told to wrap only the modules an instrumentation asked for, and acknowledged
 * before `startTelemetry` returns. Where no instrumentation reaches (the broker's headers, a result
 * chunk's store and its messages' push), trace-context.ts propagates the context itself.
 *
 * The kafkajs instrumentation traces sends only: its consumer side makes a span per record and per
 * fetched batch, extracting every record's headers, whatever the sampler decides, which more than
 * halved ingest. The result consumer's spans are the service's own, one per stored chunk.
 *
 * The batch span processor and the sampler take the standard settings: the `OTEL_BSP_*` variables
 * (read by the SDK, its defaults kept: one span per chunk leaves its queue far from full) and
 * `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (through the config; by default parent-based,
 * so a trace started upstream keeps its caller's decision).
 *
 * Only traces: metrics stay Prometheus (`/metrics`), logs stay pino's.
 */
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { register as registerSyncHooks, supportsSyncHooks } from 'import-in-the-middle/register-hooks.mjs';
import { register } from 'node:module';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { TraceSamplerName } from '../config/config.js';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';

/** Options of {@link startTelemetry}. */
export interface TelemetryOptions {
  /** `service.name` of every span. */
  readonly serviceName: string;
  /** OTLP/HTTP base URL; spans go to `<endpoint>/v1/traces` in batches. */
  readonly otlpEndpoint?: URL | null;
  /** Where spans go instead, one by one as they end (tests: an in-memory exporter). */
  readonly spanExporter?: SpanExporter;
  /** Which traces are sampled, by `OTEL_TRACES_SAMPLER`'s names; `parentbased_traceidratio` when absent. */
  readonly sampler?: TraceSamplerName;
  /** Share of new traces sampled (0 … 1) by the ratio samplers; a parent-based one keeps an upstream caller's decision. */
  readonly sampleRatio: number;
}

/** The running SDK. */
export interface Telemetry {
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

// Paths whose requests are polled by machines, not worth a trace each.
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Registers the loader hook and the SDK with its instrumentations; spans flow from here on. */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  const exporter = options.spanExporter ?? new OTLPTraceExporter({ url: new URL('v1/traces', withSlash(options.otlpEndpoint)).href });
  const hooksReady = registerLoaderHook();

  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    autoDetectResources: false,
    spanProcessors: [options.spanExporter === undefined ? new BatchSpanProcessor({ exporter }) : new SimpleSpanProcessor({ exporter })],
    sampler: createSampler(options.sampler ?? 'parentbased_traceidratio', options.sampleRatio),
    // What a span queued for export may hold: an attribute taken from a request (the GraphQL
    // source, a URL) is cut at 4 KiB, so the export queue (2,048 spans) is bounded in bytes too.
    spanLimits: { attributeValueLengthLimit: 4096, attributeCountLimit: 64, eventCountLimit: 32, linkCountLimit: 128 },
    // Traces only: without these the SDK would set up OTLP metrics and logs from the environment.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? '') }),
      new ExpressInstrumentation(),
      new GraphQLInstrumentation({ mergeItems: true, ignoreTrivialResolveSpans: true }),
      producerSideOnly(new KafkaJsInstrumentation()),
      // Redis commands only inside a trace (a consumer's append, a request), not the follower's polling.
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  await hooksReady();
  return { shutdown: () => sdk.shutdown() };
}

let syncHooksRegistered = false;

/**
 * Registers import-in-the-middle's loader hook, which must come before any module it instruments
 * loads; resolves (the returned function) once the instrumentations' hooks reach it. In-thread
 * (`module.registerHooks`) where Node runs it correctly (22.22.3+, 24.11.1+, 26): the off-thread
 * `module.register` is deprecated from Node 26 (DEP0205, a warning at every start) and pays a
 * round trip per module loaded. On earlier releases of the supported lines, the off-thread loader.
 */
function registerLoaderHook(): () => Promise<void> {
  if (supportsSyncHooks()) {
    // Once per process: a second registration would only warn.
    if (!syncHooksRegistered) registerSyncHooks();
    syncHooksRegistered = true;
    return async () => {};
  }
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  return waitForAllMessagesAcknowledged;
}

/** The SDK's sampler of one of `OTEL_TRACES_SAMPLER`'s names. */
function createSampler(name: TraceSamplerName, ratio: number): Sampler {
  const [parentBased, root] = name.startsWith('parentbased_') ? [true, name.slice('parentbased_'.length)] : [false, name];
  const sampler = root === 'always_on' ? new AlwaysOnSampler() : root === 'always_off' ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  return parentBased ? new ParentBasedSampler({ root: sampler }) : sampler;
}

/**
 * The instrumentation with its consumer side left unpatched. It has no setting for that: the patch
 * of `Kafka.prototype.consumer` it applies when kafkajs loads is replaced by one that keeps the
 * original.
 */
function producerSideOnly(instrumentation: KafkaJsInstrumentation): KafkaJsInstrumentation {
  const patches = instrumentation as unknown as { _getConsumerPatch: () => (original: unknown) => unknown };
  patches._getConsumerPatch = () => (original) => original;
  return instrumentation;
}

function withSlash(endpoint: URL | null | undefined): URL {
  if (endpoint == null) throw new Error('startTelemetry needs an OTLP endpoint or a span exporter');
  return new URL(endpoint.href.endsWith('/') ? endpoint.href : `${endpoint.href}/`);
}
