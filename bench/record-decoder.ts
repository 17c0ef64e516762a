/**
 * kafkajs's record decoder against its replacement (src/ingest/kafkajs-record-decoder.ts), in
 * process: the benchmark's own records (a 33-byte key, a 170-byte value, no headers), encoded by
 * kafkajs, decoded as its record batch decoder decodes them (the record's body cut out, then read),
 * 2,000 records to a batch context, the two decoders in alternate rounds. Prints the median
 * nanoseconds per record of each as JSON.
 *
 * Usage: npx tsx bench/record-decoder.ts [rounds, default 12]
 */
import { createRequire } from 'node:module';
import { fastRecordDecoder, stockRecordDecoder } from '../src/ingest/kafkajs-record-decoder.js';
import { median } from './lib/median.js';

const require = createRequire(import.meta.url);
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: object) => { buffer: Buffer };
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };
type RecordDecoder = NonNullable<typeof fastRecordDecoder>;

const rounds = Number(process.argv[2] ?? 12);
const BATCH = 2000;
const BATCHES = 100;
const bodies: Buffer[] = [];
for (let i = 0; i < BATCH; i++) {
  const id = `bench-${String(i % 1000).padStart(4, '0')}-0000-0000-000000000000`;
  const value = JSON.stringify({ correlationId: id, sequence: i, status: 'running', payload: { step: i, progress: 0.5, note: 'x'.repeat(24) } });
  const encoded = encodeRecord({ offsetDelta: i, timestampDelta: i * 3, key: Buffer.from(id), value: Buffer.from(value) }).buffer;
  bodies.push(new Decoder(encoded).readVarIntBytes());
}
const now = Date.now();

/** Nanoseconds per record of one round of `decode`. */
function round(decode: RecordDecoder): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let b = 0; b < BATCHES; b++) {
    const context = {
      firstOffset: String(1_000_000 + b * BATCH),
      firstTimestamp: String(now),
      magicByte: 2,
      isControlBatch: false,
      timestampType: 0,
      maxTimestamp: String(now + 6000),
    };
    for (const body of bodies) sink += (decode(new Decoder(body) as never, context).offset as string).length;
  }
  const ns = Number(process.hrtime.bigint() - started) / (BATCHES * BATCH);
  if (sink === 0) throw new Error('nothing decoded');
  return ns;
}

const times: Record<'kafkajs' | 'replacement', number[]> = { kafkajs: [], replacement: [] };
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? (['kafkajs', 'replacement'] as const) : (['replacement', 'kafkajs'] as const);
  for (const name of order) times[name].push(round((name === 'kafkajs' ? stockRecordDecoder : fastRecordDecoder) as RecordDecoder));
}
// The first round of each warms the JIT: left out.
const kafkajs = median(times.kafkajs.slice(1));
const replacement = median(times.replacement.slice(1));
console.log(
  JSON.stringify({
    records: BATCHES * BATCH,
    rounds,
    nsPerRecord: { kafkajs: Math.round(kafkajs), replacement: Math.round(replacement) },
    ratio: Number((kafkajs / replacement).toFixed(2)),
  }),
);
