/**
 * Tracing of the push path: a subscription event whose record was traced by this process gets a
 * `push` span (telemetry/trace-context.ts), child of the record's producer and linked to the chunk
 * store that announced it, from its first execution until every subscriber it reached has its
 * result; the span counts them. HTTP, parsing and execution are traced by OpenTelemetry's own
 * instrumentations (telemetry/start-telemetry.ts) when tracing is on.
 *
 * With tracing off, or for an event whose record was not sampled, this is one lookup per event.
 */
import { tracePush } from '../../../telemetry/trace-context.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** The push-tracing plugin. */
export function pushTracingPlugin(): OperationPlugin {
  return { name: 'push-tracing', onEvent: tracePush };
}
