/**
 * A compressed batch never decompresses to more than the bound: batches made by the real codecs
 * (Node's zlib for gzip and zstd, snappyjs in the xerial framing producers write, lz4-napi frames)
 * that inflate past it fail with the codec's error before or while decompressing, and the same
 * codecs still read batches within it. The registered codecs are kafkajs's (its global registry),
 * as the consumer uses them.
 */
import kafkajs from 'kafkajs';
import { compressFrameSync } from 'lz4-napi';
import { createRequire } from 'node:module';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { lz4InflatedBound, snappyInflatedLength } from '../../../src/ingest/inflated-size.js';
import { registerKafkaCodecs, type KafkaCodec } from '../../../src/ingest/kafka-codecs.js';

const require = createRequire(import.meta.url);
const snappy = require('snappyjs') as { compress(input: Buffer): Buffer };
const { CompressionCodecs, CompressionTypes } = kafkajs;
const BOUND = 1024 * 1024;
const registration = registerKafkaCodecs({}, BOUND);

/** The xerial framing Java and librdkafka producers write: a header, then size-prefixed snappy blocks. */
function xerial(blocks: Buffer[]): Buffer {
  const header = Buffer.from([130, 83, 78, 65, 80, 80, 89, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
  return Buffer.concat([header, ...blocks.flatMap((block) => [Buffer.from([0, 0, 0, 0].map((_, i) => (block.length >>> (24 - 8 * i)) & 0xff)), block])]);
}

const compress = {
  gzip: (data: Buffer) => gzipSync(data),
  zstd: (data: Buffer) => zstdCompressSync(data),
  snappy: (data: Buffer) => xerial([0, 1, 2, 3].map((i) => snappy.compress(data.subarray((i * data.length) / 4, ((i + 1) * data.length) / 4)))),
  lz4: (data: Buffer) => compressFrameSync(data),
} as const;
const TYPE = { gzip: CompressionTypes.GZIP, zstd: CompressionTypes.ZSTD, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4 } as const;
const codecOf = (name: keyof typeof TYPE) => (CompressionCodecs[TYPE[name]] as () => KafkaCodec)();

describe.each(Object.keys(TYPE) as Array<keyof typeof TYPE>)('%s', (name) => {
  it('reads a batch within the bound', async () => {
    expect(registration.available).toContain(name);
    const data = Buffer.from('{"payload":"résultat ✓"}'.repeat(10_000));
    expect((await codecOf(name).decompress(compress[name](data))).equals(data)).toBe(true);
  });

  it('refuses a batch that inflates past the bound, with the codec named', async () => {
    // 64 MiB of one byte: a few kilobytes compressed.
    const bomb = compress[name](Buffer.alloc(64 * 1024 * 1024, 120));
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    await expect(codecOf(name).decompress(bomb)).rejects.toMatchObject({ code: 'KAFKA_CODEC_FAILED', codec: name });
    // Nothing near what the batch states was allocated on the way.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('stated sizes', () => {
  it('reads what snappy blocks and lz4 frames state, and says so when the framing is not theirs', () => {
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    expect(snappyInflatedLength(compress.snappy(data))).toBe(data.length);
    expect(snappyInflatedLength(snappy.compress(data))).toBe(data.length);
    // An lz4 frame is bounded by its blocks' maximum size: at least what it holds.
    expect(lz4InflatedBound(compress.lz4(data))).toBeGreaterThanOrEqual(data.length);
    expect(lz4InflatedBound(Buffer.from('not lz4 at all'))).toBe(-1);
    expect(snappyInflatedLength(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toBe(-1);
  });
});
