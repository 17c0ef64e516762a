/**
 * What a subscriber is told about its delivery, in-band, in its pushes' `extensions.delivery`
 * (both transports; docs/delivery.md):
 *
 * - the first push of a subscription that asked for a delivery guarantee confirms what it got:
 *   `{ guarantee, store, durable }`;
 * - a subscriber that fell behind (its socket or response over its mark) is caught up from the
 *   store, and each push of the catch-up says so: `{ catchingUp: true, behind }`, `behind` being the
 *   messages still to come after it;
 * - the first push once it is live again: `{ live: true }`.
 *
 * The rest of the pushes carry nothing of this, so they stay the bytes every subscriber of the
 * operation shares; a noted one is the shared result with the extensions spliced in.
 */

import { requestedGuarantee } from '../pipeline/plugins/delivery-guarantee.js';

/** What a subscription was granted, for its confirmation. */
export interface DeliveryGrant {
  readonly guarantee: string;
  /** Where the messages are kept (`STATE_STORE`): what resuming can rely on. */
  readonly store: 'memory' | 'redis' | 'replicated';
  /**
   * What a stored message outlives, so what a resume can count on: `none` (memory: lost with this
   * process), `restarts` (Redis, or the topics a `replicated` replica rebuilds from, within their
   * retention), `failovers` (Redis with `REDIS_WAIT_REPLICAS`: a write counts once a replica holds it).
   */
  readonly durable: 'none' | 'restarts' | 'failovers';
}

/** What a subscription that asked for a delivery guarantee (its request's `extensions`) was granted, or undefined; the lifecycle refused one it could not keep. */
export function grantOf(extensions: Record<string, unknown> | null | undefined, store: Omit<DeliveryGrant, 'guarantee'>): DeliveryGrant | undefined {
  const asked = requestedGuarantee(extensions);
  return typeof asked === 'string' ? { guarantee: asked, ...store } : undefined;
}

/** One subscriber's notes. */
export interface DeliveryNotes {
  /** The `extensions.delivery` of its next push (`behind` when it is part of a catch-up), or undefined for none. */
  next(behind: number | undefined): Record<string, unknown> | undefined;
}

/** Creates the notes of a subscription; `grant` when it asked for a guarantee. */
export function createDeliveryNotes(grant: DeliveryGrant | undefined): DeliveryNotes {
  let confirm = grant;
  let caughtUp = false;
  return {
    next(behind) {
      let note: Record<string, unknown> | undefined;
      if (confirm !== undefined) {
        note = { guarantee: confirm.guarantee, store: confirm.store, durable: confirm.durable };
        confirm = undefined;
      }
      if (behind !== undefined) {
        caughtUp = true;
        note = { ...note, catchingUp: true, behind };
      } else if (caughtUp) {
        caughtUp = false;
        note = { ...note, live: true };
      }
      return note;
    },
  };
}

const CLOSE = 0x7d; // `}`

/** `payload` (a result's JSON object) with `extensions: { delivery: note }` added, as one more member. */
export function withDeliveryNote(payload: Buffer, note: Record<string, unknown>): Buffer {
  if (payload[payload.length - 1] !== CLOSE) return payload;
  const added = Buffer.from(`,"extensions":${JSON.stringify({ delivery: note })}}`);
  return Buffer.concat([payload.subarray(0, payload.length - 1), added]);
}
