/**
 * What a subscriber is told about its delivery, in-band, in its pushes' `extensions.delivery`
 * (every subscription transport; docs/delivery.md), and in the schema too, as the `delivery` field
 * of the pushed `TestMessage`, for clients behind a gateway that drops a response's extensions:
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

import { visit, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { askedGuarantee } from '../pipeline/plugins/delivery-guarantee.js';
import { executeEvent } from './plain-execution.js';
import type { PushSink, SharedResult, SubscriberSink } from './push-sink.js';

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

/**
 * What a subscription that asked for a delivery guarantee (its request's `extensions`, or the
 * `deliveryGuarantee` argument of `testMessages`) was granted, or undefined; the lifecycle refused
 * one it could not keep.
 */
export function grantOf(
  args: Pick<ExecutionArgs, 'document' | 'operationName' | 'variableValues'>,
  extensions: Record<string, unknown> | null | undefined,
  store: Omit<DeliveryGrant, 'guarantee'>,
): DeliveryGrant | undefined {
  const asked = askedGuarantee(args.document, args.operationName, args.variableValues, extensions);
  return typeof asked === 'string' ? { guarantee: asked, ...store } : undefined;
}

const CLOSE = 0x7d; // `}`

/** `payload` (a result's JSON object) with `extensions: { delivery: note }` added, as one more member. */
export function withDeliveryNote(payload: Buffer, note: Record<string, unknown>): Buffer {
  if (payload[payload.length - 1] !== CLOSE) return payload;
  const added = Buffer.from(`,"extensions":${JSON.stringify({ delivery: note })}}`);
  return Buffer.concat([payload.subarray(0, payload.length - 1), added]);
}

/** The note of a push as the schema's `DeliveryNote` has it (the guarantee as its enum value). */
function schemaNote(note: Record<string, unknown>): Record<string, unknown> {
  const guarantee = typeof note.guarantee === 'string' ? note.guarantee.toUpperCase().replaceAll('-', '_') : null;
  return {
    guarantee,
    store: note.store ?? null,
    durable: note.durable ?? null,
    catchingUp: note.catchingUp === true,
    behind: note.behind ?? null,
    live: note.live === true,
  };
}

/** The note each noted copy of a pushed message carries, for `TestMessage.delivery`. */
const notesOf = new WeakMap<object, Record<string, unknown>>();

/** The `delivery` of a message as a push resolves it: its note when it is a noted copy, null otherwise. */
export function deliveryNoteOf(message: object): Record<string, unknown> | null {
  return notesOf.get(message) ?? null;
}

/** Whether the operation selects a `delivery` field anywhere (its noted pushes are then executed with the note). */
function selectsDelivery(args: ExecutionArgs): boolean {
  let found = false;
  visit(args.document, {
    Field(node) {
      if (node.name.value === 'delivery') found = true;
    },
  });
  return found;
}

/**
 * The sink the hub and its test's group in the log (log/follower-group.ts) write to for one subscriber: each push's note is made here, from
 * `behind`, in the order the pushes leave; a noted push of an operation that selects `delivery` is
 * executed again for this subscriber with the note in its message (the shared result has it null),
 * and the note goes into its `extensions` as well; every other push is the shared result as it is.
 */
export function notingSink(
  sink: PushSink,
  args: ExecutionArgs,
  grant: DeliveryGrant | undefined,
  sharedResult: (event: unknown, result: ExecutionResult) => SharedResult,
): SubscriberSink {
  return new NotingSink(sink, args, grant, selectsDelivery(args), sharedResult);
}

/**
 * {@link notingSink}'s sink, and the subscriber's notes with it: one object per subscriber, its
 * methods shared, held for as long as the subscription lasts (bench/README.md, "Idle memory"). A
 * push with nothing to note, nearly every one, passes straight through.
 */
class NotingSink implements SubscriberSink {
  /** Its last push was part of a catch-up: the next live one says it is live again. */
  private caughtUp = false;

  constructor(
    private readonly sink: PushSink,
    private readonly args: ExecutionArgs,
    /** The grant its first push confirms, until it has. */
    private confirm: DeliveryGrant | undefined,
    /** Whether the operation selects `delivery` (its noted pushes are then executed again with the note). */
    private readonly inData: boolean,
    private readonly sharedResult: (event: unknown, result: ExecutionResult) => SharedResult,
  ) {}

  write(shared: SharedResult, behind?: number): boolean {
    if (behind === undefined && !this.caughtUp && this.confirm === undefined) return this.sink.write(shared);
    const note = this.next(behind);
    return this.sink.write(this.noted(shared, note), note);
  }

  whenWritable(resume: () => void): void {
    this.sink.whenWritable(resume);
  }

  /** The `extensions.delivery` of its next push (`behind` when it is part of a catch-up), one `write` found it has. */
  private next(behind: number | undefined): Record<string, unknown> {
    let note: Record<string, unknown> = {};
    if (this.confirm !== undefined) {
      note = { guarantee: this.confirm.guarantee, store: this.confirm.store, durable: this.confirm.durable };
      this.confirm = undefined;
    }
    if (behind !== undefined) {
      this.caughtUp = true;
      note = { ...note, catchingUp: true, behind };
    } else if (this.caughtUp) {
      this.caughtUp = false;
      note = { ...note, live: true };
    }
    return note;
  }

  private noted(shared: SharedResult, note: Record<string, unknown>): SharedResult {
    if (!this.inData || typeof shared.event !== 'object' || shared.event === null) return shared;
    const copy = { ...shared.event };
    notesOf.set(copy, schemaNote(note));
    const result = executeEvent(this.args, copy);
    // Every field below `testMessages` resolves synchronously (a pure function of the message); a
    // result that would not is left as shared, with the note in its extensions only.
    return result instanceof Promise ? shared : this.sharedResult(copy, result);
  }
}
