/**
 * JSON text carried as it is from the store to the wire. The memory log keeps each message's
 * payload as the JSON text it serialized once at ingest (`log/compact-message.ts`); a push of
 * `payload` used to parse that text into objects only for the push's serialization to turn them
 * back into the same text, on every push: with one follower per test nothing is shared, and the
 * cost grows with the payload (a few kilobytes cost tens of µs a push). A stored message offers a
 * field's text under {@link FIELD_JSON_TEXT}; the push's plan (`graphql/fanout/plain-execution.ts`)
 * puts it in the result as a {@link JsonText}, and {@link stringifyWithText} copies it into the bytes.
 */

/** The key of a stored value's method answering a field's JSON text, or undefined when it holds none. */
export const FIELD_JSON_TEXT: unique symbol = Symbol('field JSON text');

/** A stored value that can answer some of its fields as JSON text. */
export interface HoldsJsonText {
  [FIELD_JSON_TEXT](field: string): string | undefined;
}

/** Whether `value` can answer some of its fields as JSON text. */
export function holdsJsonText(value: unknown): value is HoldsJsonText {
  return typeof value === 'object' && value !== null && typeof (value as Partial<HoldsJsonText>)[FIELD_JSON_TEXT] === 'function';
}

/**
 * A JSON value held as its text (valid JSON, as `JSON.stringify` made it). A class, against the
 * project's rule of factories, for the reason `compact-message.ts` gives: one is made a push, and
 * an object with a shared prototype is cheapest made by a constructor. Anything that serializes a
 * result without {@link stringifyWithText} still gets the value (`toJSON` parses the text).
 */
export class JsonText {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    return JSON.parse(this.text) as unknown;
  }
}

/**
 * `JSON.stringify(value)` for a result that holds {@link JsonText}s, each copied as its text
 * instead of parsed and serialized again. Walks the objects and arrays around them (a result's
 * envelope: a few small objects), as `JSON.stringify` would; everything else is `JSON.stringify`'s.
 */
export function stringifyWithText(value: unknown): string | undefined {
  if (value instanceof JsonText) return value.text;
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${stringifyWithText(value[i]) ?? 'null'}`;
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const text = stringifyWithText((value as Record<string, unknown>)[key]);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}
