/**
 * The in-memory form of a stored message, sized for millions of them. A message is read far less
 * often than it is held, so it keeps
 *
 * - its payload as the JSON text it arrived as (taken from the record by the decoder, else
 *   serialized here), parsed again on each read of `payload` (a 100-byte payload costs about 110
 *   bytes as text and two or three times that as objects);
 * - status, `final` and its place in the order of arrival in one small integer (`flags`);
 * - `receivedAt` and `producedAt` as offsets from the test's creation and from `receivedAt`,
 *   which fit in V8's small integers where epoch milliseconds would each need a heap number;
 * - its deduplication key only when it cannot be derived (`m:<messageId>` and `s:<sequence>`
 *   are rebuilt on read).
 *
 * Readers see an ordinary {@link TestMessage}: the derived fields are getters on a shared
 * prototype. `toJSON` gives the plain form, so serializing one needs no knowledge of this.
 */
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

/** The fields a compact message holds. */
interface CompactFields {
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

const fieldsOf = (message: object) => message as CompactFields;

const prototype = {
  get correlationId(): string {
    return fieldsOf(this).test.correlationId;
  },
  get key(): string {
    const m = fieldsOf(this);
    if (m.ownKey !== null) return m.ownKey;
    return m.messageId !== null ? `m:${m.messageId}` : `s:${m.sequence as number}`;
  },
  get status(): TestStatus | null {
    return STATUSES[fieldsOf(this).flags % FINAL] ?? null;
  },
  get final(): boolean {
    return fieldsOf(this).flags % PLACE >= FINAL;
  },
  get arrival(): number {
    return Math.floor(fieldsOf(this).flags / PLACE);
  },
  get payload(): unknown {
    return JSON.parse(fieldsOf(this).payloadJson) as unknown;
  },
  get receivedAt(): number {
    const m = fieldsOf(this);
    return m.test.base + m.received;
  },
  get producedAt(): number | null {
    const m = fieldsOf(this);
    return m.produced === null ? null : m.test.base + m.received + m.produced;
  },
  toJSON() {
    return plainMessage(this as unknown as TestMessage);
  },
};

/**
 * V8's JSON.stringify can return its text as a tree of pieces (a cons string) that takes about
 * twice the memory of the text; reading it as a number makes V8 flatten it in place, and the
 * collector then keeps only the flat copy. (The number itself is NaN and unused.)
 */
function flat(text: string): string {
  void Number(text);
  return text;
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
  if (sequence !== null && key.startsWith('s:') && Number(key.slice(2)) === sequence) return 'sequence';
  return 'other';
}

/** Builds the compact form of `incoming`, received at `receivedAt` as its test's `arrival`-th message, for `test`. */
export function compactMessage(incoming: IncomingMessage, receivedAt: number, test: CompactTest, arrival: number): TestMessage {
  const { key, messageId, sequence } = incoming;
  const derivable = keyKind(incoming) !== 'other';
  // A literal with `__proto__` gives every message the same shape (hidden class) and prototype.
  const fields = {
    __proto__: prototype,
    test,
    messageId,
    sequence,
    flags: STATUSES.indexOf(incoming.status) + (incoming.final ? FINAL : 0) + arrival * PLACE,
    received: receivedAt - test.base,
    produced: incoming.producedAt === null ? null : incoming.producedAt - receivedAt,
    // The decoder hands over the payload's text as it arrived when it could: kept as it is.
    payloadJson: incoming.payloadJson ?? flat(JSON.stringify(incoming.payload) ?? 'null'),
    ownKey: derivable ? null : key,
  };
  return fields as unknown as TestMessage;
}
