/**
 * JSON text carried as it is from the store to the wire. The memory log keeps each message's
 * payload as the JSON text it serialized once at ingest (`log/compact-message.ts`); every read of
 * `payload` (a push, a query, `GET /tests/{id}`) used to parse that text into objects only for the
 * response's serialization to turn them back into the same text: with one follower per test
 * nothing is shared between pushes, and the cost grows with the payload (at 10 KB, about 140 µs a
 * push of the 150 it cost). A stored message offers a field's text under {@link FIELD_JSON_TEXT};
 * the field's resolver answers it as a {@link JsonText}, and {@link stringifyWithText}, which
 * serializes every result and REST body the service serializes itself (pushes and their error
 * results on every transport, bodies over HTTP, `GET /tests/{id}`), copies it into the output. A
 * result another library serializes (graphql-ws's and graphql-sse's query results) gets the value:
 * `toJSON` parses the text.
 */
import { randomBytes } from 'node:crypto';

/** The key of a stored value's method answering a field's JSON text, or undefined when it holds none. */
export const FIELD_JSON_TEXT: unique symbol = Symbol('field JSON text');

/** A stored value that can answer some of its fields as JSON text. */
export interface HoldsJsonText {
  [FIELD_JSON_TEXT](field: string): string | undefined;
}

// While stringifyWithText runs (synchronously: nothing else runs in between), the texts met so far.
let collecting: string[] | undefined;
// Stands for a text in the native serializer's output, numbered: random per process, so that no
// string a client or a producer controls can be taken for one (it never leaves the process).
const MARK = `json-text-${randomBytes(12).toString('hex')}-`;
const MARKED = new RegExp(`"${MARK}(\\d+)"`, 'g');
// The first marks, made once: a push holds one text, and its mark is the same string every time
// (a result holding more, a page of messages, makes the rest as it needs them).
const MARKS: string[] = [];
const KEPT_MARKS = 64;
const markOf = (index: number): string => (index < KEPT_MARKS ? (MARKS[index] ??= `${MARK}${index}`) : `${MARK}${index}`);
// The first mark as the serializer writes it, quoted: a result holding one text (a push of a payload) is spliced, not searched by the pattern.
const FIRST_QUOTED = `"${markOf(0)}"`;

/**
 * A JSON value held as its text (valid JSON, as `JSON.stringify` made it). A class, against the
 * project's rule of factories, for the reason `compact-message.ts` gives: one is made a read, and an
 * object with a shared prototype is cheapest made by a constructor. A serialization other than
 * {@link stringifyWithText} still gets the value: `toJSON` parses the text.
 */
export class JsonText {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    if (collecting === undefined) return JSON.parse(this.text) as unknown;
    collecting.push(this.text);
    return markOf(collecting.length - 1);
  }
}

/** `parent[field]`, or its stored text as a {@link JsonText} where `parent` holds that text. */
export function jsonField(parent: object, field: string): unknown {
  const offer = (parent as Partial<HoldsJsonText>)[FIELD_JSON_TEXT];
  const text = typeof offer === 'function' ? offer.call(parent, field) : undefined;
  if (text === undefined) return (parent as Record<string, unknown>)[field];
  return text === 'null' ? null : new JsonText(text);
}

/**
 * `JSON.stringify(value)`, with every {@link JsonText} in it copied as its text rather than parsed
 * and serialized again. The native serializer does the walk; each text stands in its output as a
 * marked string, replaced afterwards.
 */
export function stringifyWithText(value: object): string {
  const texts: string[] = [];
  const outer = collecting;
  collecting = texts;
  let out: string | undefined;
  try {
    out = JSON.stringify(value);
  } finally {
    collecting = outer;
  }
  if (out === undefined) throw new TypeError('the value has no JSON form');
  if (texts.length === 0) return out;
  if (texts.length === 1) {
    // Its one mark, where the serializer wrote it: no match objects and no callback a push.
    const at = out.indexOf(FIRST_QUOTED);
    if (at >= 0) return out.slice(0, at) + (texts[0] as string) + out.slice(at + FIRST_QUOTED.length);
  }
  return out.replace(MARKED, (_, index: string) => texts[Number(index)] as string);
}
