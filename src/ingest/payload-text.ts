/**
 * The payload's JSON text as it arrived in the record, so that the store can keep it as it is
 * instead of serializing the parsed value again (a record is parsed once to validate it; it used
 * to be serialized a second time just to be stored).
 *
 * The scanner runs over the record's UTF-8 bytes after `JSON.parse` has accepted their text, so it
 * only has to find boundaries, not validate. JSON's structural characters are ASCII and no byte of
 * a multi-byte UTF-8 sequence is, so scanning bytes never mistakes part of a character for one.
 *
 * The text is kept only when reading it back gives exactly what parse-then-stringify would give,
 * and only when it is as compact as `JSON.stringify` would write it. In doubt it is not kept, and
 * the caller serializes the parsed value as before:
 * - a number with an exponent or of more than 300 characters (it may overflow to Infinity, which
 *   `JSON.stringify` writes as null, or underflow to a negative zero);
 * - a negative zero (`-0`, `-0.0`), which `JSON.stringify` writes as 0;
 * - whitespace outside strings (pretty-printed text would cost memory for nothing).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const SPACE = 0x20;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
/** Longest number token kept as it is: far below the 309 digits a double overflows at. */
const MAX_NUMBER = 300;

/** The member named `payload` of a JSON object's text, as it is found by {@link scanObject}. */
interface Scan {
  /** Byte offsets of the last `payload` member's value (JSON.parse keeps the last of duplicates). */
  start: number;
  end: number;
  /** Whether that value's text may be kept as it is. */
  payloadSafe: boolean;
  /** Whether the whole object's text may be kept as it is. */
  wholeSafe: boolean;
}

/**
 * The payload text to store for a record whose value `bytes` decoded (as UTF-8) to `text`, a JSON
 * object that `JSON.parse` accepted: the `payload` member's value text when `hasPayload`, else the
 * whole text (a record without a `payload` field is stored whole). Undefined when the text must not
 * be kept as it is (see the file comment): the caller then serializes the parsed value.
 */
export function payloadText(bytes: Buffer, text: string, hasPayload: boolean): string | undefined {
  const scan = scanObject(bytes);
  if (scan === undefined) return undefined;
  if (!hasPayload) return scan.wholeSafe ? text : undefined;
  if (scan.start < 0 || !scan.payloadSafe) return undefined;
  // A fresh string from the bytes rather than a slice of `text`: V8 would keep a slice's whole
  // parent (every other field of the record) alive for as long as the message is stored.
  return bytes.toString('utf8', scan.start, scan.end);
}

/** Scans the members of the object that `bytes` holds; undefined when it does not start with `{`. */
function scanObject(b: Buffer): Scan | undefined {
  const scan: Scan = { start: -1, end: -1, payloadSafe: false, wholeSafe: true };
  const n = b.length;
  if (b[0] !== OPEN_OBJECT || b[n - 1] !== CLOSE_OBJECT) {
    // Whitespace around the object: its members are still found, but the whole text is not kept.
    scan.wholeSafe = false;
  }
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_OBJECT) return undefined;
  i += 1;
  for (;;) {
    const at = skipSpace(b, i);
    if (at !== i) scan.wholeSafe = false;
    i = at;
    if (b[i] === CLOSE_OBJECT || i >= n) return scan;
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(b, i);
    const isPayload = isPayloadKey(b, i, keyEnd);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    i += 1;
    const valueStart = skipSpace(b, i);
    if (valueStart !== i || i !== keyEnd + 1) scan.wholeSafe = false;
    const value = scanValue(b, valueStart);
    if (!value.safe) scan.wholeSafe = false;
    if (isPayload) {
      scan.start = valueStart;
      scan.end = value.end;
      scan.payloadSafe = value.safe;
    }
    i = skipSpace(b, value.end);
    if (i !== value.end) scan.wholeSafe = false;
    if (b[i] === COMMA) i += 1;
    else if (b[i] === CLOSE_OBJECT) return scan;
    else return undefined;
  }
}

/** Whether the key string `b[from, to)` (quotes included) reads as `payload`, escapes and all. */
function isPayloadKey(b: Buffer, from: number, to: number): boolean {
  if (to - from === 9) return b.toString('latin1', from + 1, to - 1) === 'payload';
  // An escaped spelling such as "p\u0061yload" is the same key to JSON.parse: decode it.
  const escape = b.indexOf(BACKSLASH, from);
  return escape >= 0 && escape < to && to - from < 64 && JSON.parse(b.toString('utf8', from, to)) === 'payload';
}

/** Offset just past one value starting at `from`, and whether its text may be kept as it is. */
function scanValue(b: Buffer, from: number): { end: number; safe: boolean } {
  const first = b[from] as number;
  if (first === QUOTE) return { end: stringEnd(b, from), safe: true };
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return scalarEnd(b, from);
  let safe = true;
  let depth = 0;
  let i = from;
  for (;;) {
    const c = b[i] as number;
    if (c === QUOTE) {
      i = stringEnd(b, i);
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth += 1;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth -= 1;
      if (depth === 0) return { end: i + 1, safe };
    } else if (c <= SPACE) safe = false;
    else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      const scalar = scalarEnd(b, i);
      if (!scalar.safe) safe = false;
      i = scalar.end;
      continue;
    }
    i += 1;
    // Unbalanced text never passed JSON.parse; stop rather than run past the end.
    if (i >= b.length) return { end: b.length, safe: false };
  }
}

/** Offset just past a number, `true`, `false` or `null` at `from`, and whether it may be kept. */
function scalarEnd(b: Buffer, from: number): { end: number; safe: boolean } {
  const negative = b[from] === MINUS;
  let nonZeroDigit = false;
  let exponent = false;
  let i = from;
  for (; i < b.length; i++) {
    const c = b[i] as number;
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c <= SPACE) break;
    if (c > DIGIT_0 && c <= DIGIT_9) nonZeroDigit = true;
    else if (c === LOWER_E || c === UPPER_E) exponent = true;
  }
  // `true` and `false` contain an `e` too: only a number's exponent is in doubt.
  const isNumber = negative || (b[from] as number) <= DIGIT_9;
  const safe = !isNumber || (!exponent && i - from <= MAX_NUMBER && !(negative && !nonZeroDigit));
  return { end: i, safe };
}

/** Offset just past the string whose opening quote is at `from`. */
function stringEnd(b: Buffer, from: number): number {
  let i = from + 1;
  for (;;) {
    const quote = b.indexOf(QUOTE, i);
    if (quote < 0) return b.length;
    // A quote after an odd number of backslashes is escaped.
    let slashes = 0;
    while (b[quote - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

function skipSpace(b: Buffer, from: number): number {
  let i = from;
  while (i < b.length && (b[i] as number) <= SPACE) i += 1;
  return i;
}
