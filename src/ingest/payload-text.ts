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
 *
 * Written for speed (it runs for every record): plain loops over bytes, no allocation; the scan's
 * results are kept in module variables, which is safe as a scan never yields.
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
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
/** Longest number token kept as it is: far below the 309 digits a double overflows at. */
const MAX_NUMBER = 300;
/** `payload` as bytes. */
const PAYLOAD = [0x70, 0x61, 0x79, 0x6c, 0x6f, 0x61, 0x64];

/** Set by the scan functions: whether the text scanned since it was last set may be kept as it is. */
let safe = true;
/** Set by {@link stringEnd}: whether the string it scanned holds an escape. */
let escaped = false;

/**
 * The payload text to store for a record whose value `bytes` decoded (as UTF-8) to `text`, a JSON
 * object that `JSON.parse` accepted: the `payload` member's value text when `hasPayload`, else the
 * whole text (a record without a `payload` field is stored whole). Undefined when the text must not
 * be kept as it is (see the file comment): the caller then serializes the parsed value.
 */
export function payloadText(bytes: Buffer, text: string, hasPayload: boolean): string | undefined {
  const n = bytes.length;
  // Compact text only: no whitespace around the object either.
  if (bytes[0] !== OPEN_OBJECT || bytes[n - 1] !== CLOSE_OBJECT) return undefined;
  let wholeSafe = true;
  let start = -1;
  let end = -1;
  let payloadSafe = false;
  let i = 1;
  while (i < n && bytes[i] === QUOTE) {
    const keyEnd = stringEnd(bytes, i);
    const isPayload = keyEnd - i === 9 ? isPayloadKey(bytes, i + 1) : escaped && isEscapedPayloadKey(bytes, i, keyEnd);
    if (bytes[keyEnd] !== COLON) return undefined;
    safe = true;
    const valueEnd = valueEndAt(bytes, keyEnd + 1);
    if (!safe) wholeSafe = false;
    if (isPayload) {
      // JSON.parse keeps the last of duplicate members: so does this.
      start = keyEnd + 1;
      end = valueEnd;
      payloadSafe = safe;
    }
    i = valueEnd;
    if (bytes[i] === COMMA) i += 1;
    else break;
  }
  // Anything but the closing brace here is whitespace (JSON.parse accepted the text): not compact.
  if (i !== n - 1) return undefined;
  if (!hasPayload) return wholeSafe ? text : undefined;
  if (start < 0 || !payloadSafe) return undefined;
  // A fresh string from the bytes rather than a slice of `text`: V8 would keep a slice's whole
  // parent (every other field of the record) alive for as long as the message is stored.
  return bytes.toString('utf8', start, end);
}

function isPayloadKey(b: Buffer, from: number): boolean {
  for (let k = 0; k < 7; k++) if (b[from + k] !== PAYLOAD[k]) return false;
  return true;
}

/** Whether an escaped key such as "p\u0061yload" reads as `payload`, as it does to JSON.parse. */
function isEscapedPayloadKey(b: Buffer, from: number, to: number): boolean {
  return to - from < 64 && JSON.parse(b.toString('utf8', from, to)) === 'payload';
}

/** Offset just past the value at `from`; clears `safe` when its text must not be kept. */
function valueEndAt(b: Buffer, from: number): number {
  const first = b[from] as number;
  if (first === QUOTE) return stringEnd(b, from);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) return containerEnd(b, from);
  return scalarEnd(b, from);
}

/** Offset just past the object or array at `from`. */
function containerEnd(b: Buffer, from: number): number {
  const n = b.length;
  let depth = 0;
  let i = from;
  while (i < n) {
    const c = b[i] as number;
    if (c === QUOTE) {
      i = stringEnd(b, i);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1;
      i += 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth -= 1;
      i += 1;
      if (depth === 0) return i;
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      i = scalarEnd(b, i);
    } else {
      if (c <= SPACE) safe = false;
      i += 1;
    }
  }
  // Unbalanced text never passed JSON.parse; never run past the end.
  safe = false;
  return n;
}

/** Offset just past a number, `true`, `false` or `null` at `from`. */
function scalarEnd(b: Buffer, from: number): number {
  const n = b.length;
  const first = b[from] as number;
  const isNumber = first === MINUS || first <= DIGIT_9;
  let nonZeroDigit = false;
  let exponent = false;
  let i = from;
  for (; i < n; i++) {
    const c = b[i] as number;
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c <= SPACE || c === COLON) break;
    if (c >= DIGIT_1 && c <= DIGIT_9) nonZeroDigit = true;
    else if (c === LOWER_E || c === UPPER_E) exponent = true;
  }
  // `true` and `false` contain an `e` too: only a number's exponent is in doubt.
  if (isNumber && (exponent || i - from > MAX_NUMBER || (first === MINUS && !nonZeroDigit))) safe = false;
  if (i < n && (b[i] as number) <= SPACE) safe = false;
  return i;
}

/** Offset just past the string whose opening quote is at `from`. */
function stringEnd(b: Buffer, from: number): number {
  const n = b.length;
  escaped = false;
  for (let i = from + 1; i < n; i++) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      // The escaped character is skipped: an escaped quote does not end the string.
      escaped = true;
      i += 1;
    }
  }
  return n;
}
