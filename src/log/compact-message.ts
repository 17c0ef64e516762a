/**
 * The in-memory form of a stored message, sized for millions of them. A message is read far less
 * often than it is held, so it keeps
 *
 * - its payload as JSON text (the text a caller handed over, else serialized here once: cheaper
 *   than finding the payload's own text in the record, which an earlier release did), parsed again
 *   on each read of `payload` (a 100-byte payload costs about 110 bytes as text and two or three
 *   times that as objects);
 * - status, `final` and its place in the order of arrival in one small integer (`flags`);
 * - `receivedAt` and `producedAt` as offsets from the test's creation and from `receivedAt`,
 *   which fit in V8's small integers where epoch milliseconds would each need a heap number;
 * - its deduplication key only when it cannot be derived (`m:<messageId>` and `s:<sequence>`
 *   are rebuilt on read).
 *
 * Readers see an ordinary {@link TestMessage}: the derived fields are getters on a shared
 * prototype. `toJSON` gives the plain form, so serializing one needs no knowledge of this. The
 * memory log holds these fields as columns (message-rows.ts), not these objects: a message made at
 * append is handed to its followers and let go, and each read makes a view from its row.
 */
import { FIELD_JSON_TEXT } from '../domain/json-text.js';
import { plainMessage, type IncomingMessage, type TestMessage, type TestStatus } from '../domain/types.js';

const STATUSES: readonly (TestStatus | null)[] = [null, 'PENDING', 'RUNNING', 'COMPLETED', 'FAILED'];
const FINAL = 8;
const PLACE = 16;

/** What every message of one test shares (one object per test, pointed at by each message). */
export interface CompactTest {
  readonly correlationId: string;
  /** The test's creation time, which the messages' `received` offsets count from. */
  readonly base: number;
}

/** The fields a compact message holds (what message-rows.ts keeps of it as columns). */
export interface CompactFields {
  readonly test: CompactTest;
  readonly messageId: string | null;
  readonly sequence: number | null;
  /**
   * Index into STATUSES, plus FINAL when final, plus its place in its test's order of arrival times
   * PLACE: one small integer for the three (up to 2^26 messages a test; past that a heap number,
   * still right). Read with arithmetic, not bit operations, for the same reason.
   */
  readonly flags: number;
  /** Offset from `base`. */
  readonly received: number;
  /** Offset from receivedAt, or null. */
  readonly produced: number | null;
  readonly payloadJson: string;
  /** The key when it is an offset key (`o:…`); null when derived. */
  readonly ownKey: string | null;
}

/**
 * A stored message's fields, built by a constructor, against the project's rule of factories: this
 * is a data shape, not a component, and V8 builds an object whose prototype is set in its literal
 * (`{ __proto__: prototype, ... }`) through a slow path, about 600 ns against 25 for a constructor
 * (3,000,000 of each on Node 26), which was a tenth of the consumer's time into the memory log.
 */
class CompactMessage implements CompactFields {
  constructor(
    readonly test: CompactTest,
    readonly messageId: string | null,
    readonly sequence: number | null,
    readonly flags: number,
    readonly received: number,
    readonly produced: number | null,
    readonly payloadJson: string,
    readonly ownKey: string | null,
  ) {}

  get correlationId(): string {
    return this.test.correlationId;
  }
  get key(): string {
    if (this.ownKey !== null) return this.ownKey;
    return this.messageId !== null ? `m:${this.messageId}` : `s:${this.sequence as number}`;
  }
  get status(): TestStatus | null {
    return STATUSES[this.flags % FINAL] ?? null;
  }
  get final(): boolean {
    return this.flags % PLACE >= FINAL;
  }
  get arrival(): number {
    return Math.floor(this.flags / PLACE);
  }
  get payload(): unknown {
    return JSON.parse(this.payloadJson) as unknown;
  }
  /** The payload's text as stored, for a read that copies it into its response rather than parse it (`domain/json-text.ts`). */
  [FIELD_JSON_TEXT](field: string): string | undefined {
    return field === 'payload' ? this.payloadJson : undefined;
  }
  get receivedAt(): number {
    return this.test.base + this.received;
  }
  get producedAt(): number | null {
    return this.produced === null ? null : this.test.base + this.received + this.produced;
  }
  toJSON() {
    return plainMessage(this as unknown as TestMessage);
  }
}

/**
 * Which kind of deduplication key a message has: `id` when it is `m:<messageId>`, `sequence` when
 * it is `s:<sequence>`, else `other`. Compares without building the expected key.
 */
export function keyKind(message: IncomingMessage): 'id' | 'sequence' | 'other' {
  const { key, messageId, sequence } = message;
  if (messageId !== null) {
    return key.length === messageId.length + 2 && key.startsWith('m:') && key.endsWith(messageId) ? 'id' : 'other';
  }
  if (sequence !== null && isSequenceKey(key, sequence)) return 'sequence';
  return 'other';
}

/** Whether `key` is exactly `s:<sequence>`: `s:07` is not `s:7`, which a read would rebuild. */
export function isSequenceKey(key: string, sequence: number): boolean {
  // Read digit by digit rather than compared with a built `s:<sequence>`: this runs for every
  // message stored, and the built key was a string allocated (and flattened) each time.
  const length = key.length;
  if (length < 3 || length > 12 || key.charCodeAt(0) !== 0x73 || key.charCodeAt(1) !== 0x3a) return false;
  if (length > 3 && key.charCodeAt(2) === 0x30) return false;
  let value = 0;
  for (let i = 2; i < length; i++) {
    const digit = key.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return false;
    value = value * 10 + digit;
  }
  return value === sequence;
}

/**
 * Builds the compact form of `incoming`, received at `receivedAt` as its test's `arrival`-th
 * message, for `test`; `kind` is its {@link keyKind} (the caller has it already).
 */
export function compactMessage(
  incoming: IncomingMessage,
  receivedAt: number,
  test: CompactTest,
  arrival: number,
  kind = keyKind(incoming),
): TestMessage & CompactFields {
  return new CompactMessage(
    test,
    incoming.messageId,
    incoming.sequence,
    STATUSES.indexOf(incoming.status) + (incoming.final ? FINAL : 0) + arrival * PLACE,
    receivedAt - test.base,
    incoming.producedAt === null ? null : incoming.producedAt - receivedAt,
    // A caller that has the payload's text keeps it; else it is serialized once, here (flat on Node 26).
    JSON.stringify(incoming.payload) ?? 'null',
    kind !== 'other' ? null : incoming.key,
  ) as unknown as TestMessage & CompactFields;
}

/** A compact message from the fields a row held (message-rows.ts): the view a read gets. */
export function compactView(
  test: CompactTest,
  messageId: string | null,
  sequence: number | null,
  flags: number,
  received: number,
  produced: number | null,
  payloadJson: string,
  ownKey: string | null,
): TestMessage {
  return new CompactMessage(test, messageId, sequence, flags, received, produced, payloadJson, ownKey) as unknown as TestMessage;
}
