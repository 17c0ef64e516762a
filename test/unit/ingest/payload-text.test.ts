/**
 * The payload's JSON text taken from the record: whatever the record holds, what is kept reads
 * back exactly as parsing and serializing the payload would (the old path), and it is kept in the
 * common case, so the store does not serialize it again.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../../src/domain/types.js';
import type { BrokerRecord } from '../../../src/ingest/broker-record.js';
import { decodeResult } from '../../../src/ingest/decode-result.js';
import { payloadText } from '../../../src/ingest/payload-text.js';
import { createMemoryResultLog } from '../../../src/log/memory-result-log.js';

const record = (text: string): BrokerRecord => ({ topic: 'results', partition: 0, offset: '7', key: null, value: Buffer.from(text, 'utf8'), headers: {} });

function decode(text: string): IncomingMessage {
  const result = decodeResult(record(text));
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result.message;
}

/** What the old path stored: the parsed payload serialized again. */
const reserialized = (message: IncomingMessage) => JSON.stringify(message.payload) ?? 'null';

/** Stores `message` as decoded and with its text dropped (the old path) and reads both back as REST/GraphQL would serialize them. */
async function readBack(message: IncomingMessage) {
  const clock = () => 1_700_000_000_000;
  const withText = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: 10, now: clock });
  const without = createMemoryResultLog({ ttlSeconds: 60, maxTests: 10, maxMessagesPerTest: 10, now: clock });
  await withText.append([message]);
  await without.append([{ ...message, payloadJson: undefined }]);
  const [a, b] = await Promise.all([withText.get(message.correlationId), without.get(message.correlationId)]);
  await Promise.all([withText.dispose(), without.dispose()]);
  return { kept: a?.messages[0], old: b?.messages[0] };
}

// Records whose payload text is kept as it is (then read back equal to the old path).
const kept: Array<[string, string]> = [
  ['nested objects and arrays', '{"correlationId":"c","payload":{"a":[1,[2,{"b":null}],{}],"c":{"d":{"e":[true,false]}}}}'],
  ['strings holding braces, brackets, commas, colons and quotes', String.raw`{"correlationId":"c","payload":{"s":"}{][,:\"\\","t":"\"payload\":{"}}`],
  ['a payload before the other fields', '{"payload":{"x":"}"},"correlationId":"c","sequence":2}'],
  [
    'unicode as UTF-8 and as escapes',
    String.raw`{"correlationId":"c","payload":{"é":"naïve ☃ 😀","esc":"\u00e9\u2603\ud83d\ude00","lone":"\ud800","slash":"\/"}}`,
  ],
  ['a key that only looks like payload', '{"correlationId":"c","payloadx":1,"payload":{"payload":{"payload":2}}}'],
  ['an escaped spelling of the key', String.raw`{"correlationId":"c","p\u0061yload":[1,2]}`],
  ['duplicate payload members (the last wins, as in JSON.parse)', '{"correlationId":"c","payload":1,"payload":{"second":true}}'],
  ['scalars', '{"correlationId":"c","payload":"just text"}'],
  ['null', '{"correlationId":"c","payload":null}'],
  ['zero, negatives, fractions and big integers', '{"correlationId":"c","payload":[0,-1,-0.5,0.1,1.10,12345678901234567890123,-9007199254740993]}'],
  ['a record without a payload field (stored whole)', '{"correlationId":"c","score":9,"nested":{"x":"}"}}'],
];

// Records whose text is not kept: the payload is serialized from its parsed value, as before.
const reserializedCases: Array<[string, string]> = [
  ['a number that overflows to Infinity', '{"correlationId":"c","payload":{"n":1e400}}'],
  ['a negative zero', '{"correlationId":"c","payload":[-0]}'],
  ['a negative zero with decimals', '{"correlationId":"c","payload":-0.000}'],
  ['a negative underflow', '{"correlationId":"c","payload":{"n":-1e-400}}'],
  ['any exponent', '{"correlationId":"c","payload":1.5E3}'],
  ['whitespace between tokens', '{"correlationId":"c","payload":{ "a" : [1, 2] }}'],
  ['newlines in a pretty-printed record without a payload field', '{\n  "correlationId": "c",\n  "x": 1\n}'],
  ['a number of more than 300 digits', `{"correlationId":"c","payload":${'9'.repeat(320)}}`],
];

describe('payload text taken from the record', () => {
  it.each(kept)('keeps %s as it arrived, reading back as parse and stringify give', async (_label, text) => {
    const message = decode(text);
    expect(message.payloadJson).toBeDefined();
    expect(JSON.parse(message.payloadJson as string)).toEqual(JSON.parse(reserialized(message)));
    expect(JSON.parse(message.payloadJson as string)).toEqual(message.payload);
    const { kept: a, old } = await readBack(message);
    expect(a?.payload).toEqual(old?.payload);
    // What REST and GraphQL send: the serialized message, byte for byte as before.
    expect(JSON.stringify(a)).toBe(JSON.stringify(old));
  });

  it.each(reserializedCases)('does not keep %s, and reads back as before', async (_label, text) => {
    const message = decode(text);
    expect(message.payloadJson).toBeUndefined();
    const { kept: a, old } = await readBack(message);
    expect(a?.payload).toEqual(old?.payload);
    expect(JSON.stringify(a)).toBe(JSON.stringify(old));
  });

  it('the kept text of an embedded payload is exactly its span in the record', () => {
    expect(decode('{"correlationId":"c","payload":{"a":"\\u00e9"},"sequence":1}').payloadJson).toBe('{"a":"\\u00e9"}');
    expect(decode('{"correlationId":"c","payload":"x"}').payloadJson).toBe('"x"');
    const whole = '{"correlationId":"c","score":9}';
    expect(decode(whole).payloadJson).toBe(whole);
  });

  it('reads invalid UTF-8 inside a string as JSON.parse read it (replacement characters)', () => {
    const bytes = Buffer.concat([Buffer.from('{"correlationId":"c","payload":{"s":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('b"}}')]);
    const text = bytes.toString('utf8');
    const kept = payloadText(bytes, text, true);
    expect(JSON.parse(kept as string)).toEqual((JSON.parse(text) as { payload: unknown }).payload);
  });

  it('refuses to guess on text that is not an object', () => {
    expect(payloadText(Buffer.from('[1,2]'), '[1,2]', false)).toBeUndefined();
    expect(payloadText(Buffer.from(' {"a":1}'), ' {"a":1}', false)).toBeUndefined();
  });

  it('over thousands of generated records, every kept text reads back as parse and stringify give', () => {
    const random = seeded(12);
    let keptCount = 0;
    const total = 3000;
    for (let i = 0; i < total; i++) {
      const payload = value(random, 0);
      const fields: Array<[string, unknown]> = [
        ['correlationId', `c-${i}`],
        ['sequence', i],
        ['payload', payload],
        ['note', value(random, 2)],
      ];
      // Fields in any order, the payload anywhere among them; some records written with escapes.
      fields.sort(() => random() - 0.5);
      let text = `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
      if (random() < 0.3) text = text.replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
      const message = decode(text);
      expect(message.payload).toEqual(payload);
      if (message.payloadJson === undefined) continue;
      keptCount += 1;
      expect(JSON.parse(message.payloadJson)).toEqual(JSON.parse(reserialized(message)));
    }
    // Generated numbers are plain decimals most of the time: most payloads are kept.
    expect(keptCount).toBeGreaterThan(total / 2);
  });
});

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = ['a', 'b', '{', '}', '[', ']', '"', '\\', ',', ':', ' ', 'é', '☃', '😀', '\n', '\u2028', '/', 'payload'];

function text(random: () => number): string {
  let s = '';
  const length = Math.floor(random() * 8);
  for (let i = 0; i < length; i++) s += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return s;
}

function value(random: () => number, depth: number): unknown {
  const kind = Math.floor(random() * (depth > 3 ? 5 : 7));
  if (kind === 0) return text(random);
  if (kind === 1) return [0, -1, 1.5, -0.25, 1e21, 123456789, 2 ** 60, 1e-7][Math.floor(random() * 8)];
  if (kind === 2) return random() < 0.5;
  if (kind === 3) return null;
  if (kind === 4) return Math.floor(random() * 1000) - 500;
  const size = Math.floor(random() * 4);
  if (kind === 5) return Array.from({ length: size }, () => value(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) object[text(random)] = value(random, depth + 1);
  return object;
}
