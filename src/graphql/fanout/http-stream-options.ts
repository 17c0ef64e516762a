/**
 * What every binding that streams a subscription over one HTTP response (graphql-sse, the
 * multipart subscription protocol) is given: the pipeline, the per-principal cap, the response
 * sink's bounds, the coalescer and the delivery grant. One type, so the two cannot drift apart.
 */
import type { OperationPipeline } from '../pipeline/operation-pipeline.js';
import type { PrincipalSlots } from '../pipeline/principal-slots.js';
import type { DeliveryGrant } from './delivery-notes.js';
import type { WriteCoalescer } from './write-coalescer.js';

/** The options the HTTP stream bindings share. */
export interface HttpStreamOptions {
  /** The operation pipeline: document resolution, rules, context, error edge, shared subscriptions. */
  readonly pipeline: OperationPipeline;
  /** Streams one principal may hold open at once in this process (with `slots`: over every binding sharing them). */
  readonly maxStreamsPerPrincipal: number;
  /** The per-principal slots, when shared with another streaming binding; else the binding's own. */
  readonly slots?: PrincipalSlots;
  /** Bytes waiting to be sent to one client past which its stream waits for it to read. */
  readonly maxBufferedBytes: number;
  /** How long a response may stay over `maxBufferedBytes` (a client that stopped reading) before it is cut. */
  readonly drainTimeoutMs: number;
  /** Where subscription pushes are written, to leave together (the process's, shared with the WebSocket). */
  readonly coalescer: WriteCoalescer;
  /** Where messages are kept, for the confirmation of a delivery guarantee a subscription asks for. */
  readonly delivery: Omit<DeliveryGrant, 'guarantee'>;
}
