/**
 * The codec seam: what kafkajs gets from its registry when it meets a compressed batch. A codec
 * whose package failed to load, or that fails on a batch, must give a non-retriable error naming
 * the codec (kafkajs would otherwise retry the fetch in silence), and a crash must be traced back
 * to it whether the error came from this registry or from kafkajs's own placeholder.
 */
import { gzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressFrame } from 'lz4-napi';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCodecFaultWatch } from '../../../src/ingest/codec-fault.js';
import { findCodecFailure, KafkaCodecError, registerKafkaCodecs, type KafkaCodec } from '../../../src/ingest/kafka-codecs.js';

// First registration wins for the whole process (this test file): lz4 stands for a package that failed to load.
const registration = registerKafkaCodecs({
  lz4: () => {
    throw new Error('Cannot find native binding');
  },
});
const codec = (type: CompressionTypes) => (CompressionCodecs as Record<number, () => KafkaCodec>)[type]!();
const TEXT = 'zstd fixture: résultat ✓ '.repeat(8);
// `printf … | zstd -c`, base64: a real zstd frame, as the Zstandard CLI (and librdkafka) writes it.
const ZSTD_FRAME = Buffer.from('KLUv/QRYHQEA4HpzdGQgZml4dHVyZTogcsOpc3VsdGF0IOKckyABAASfmk6iHCTp', 'base64');

describe('registerKafkaCodecs', () => {
  it('registers every codec whose package loads, and says why the others did not', () => {
    expect(registration.available).toEqual(['gzip', 'snappy', 'zstd']);
    expect(registration.missing).toEqual([{ codec: 'lz4', reason: 'Cannot find native binding' }]);
    // A second call changes nothing: the registry belongs to the process.
    expect(registerKafkaCodecs()).toBe(registration);
  });

  it('decompresses gzip, snappy (plain and xerial-framed) and zstd', async () => {
    expect((await codec(CompressionTypes.GZIP).decompress(gzipSync(TEXT))).toString()).toBe(TEXT);
    const snappy = codec(CompressionTypes.Snappy);
    const block = await snappy.compress({ buffer: Buffer.from(TEXT) });
    expect((await snappy.decompress(block)).toString()).toBe(TEXT);
    // Java and librdkafka producers write xerial framing: magic, version, compatible version, then sized blocks.
    const size = Buffer.alloc(4);
    size.writeUInt32BE(block.length);
    const xerial = Buffer.concat([Buffer.from([130, 83, 78, 65, 80, 80, 89, 0, 0, 0, 0, 1, 0, 0, 0, 1]), size, block, size, block]);
    expect((await snappy.decompress(xerial)).toString()).toBe(TEXT + TEXT);
    expect((await codec(CompressionTypes.ZSTD).decompress(ZSTD_FRAME)).toString()).toBe(TEXT);
  });

  it('a missing codec fails the batch with a non-retriable error naming the codec and the cause', async () => {
    const frame = compressFrame(Buffer.from(TEXT));
    const error = await codec(CompressionTypes.LZ4)
      .decompress(await frame)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaCodecError);
    expect(error).toMatchObject({
      codec: 'lz4',
      code: 'KAFKA_CODEC_FAILED',
      retriable: false,
      message: 'no lz4 codec: its package failed to load (Cannot find native binding)',
    });
  });

  it.each([
    ['gzip', CompressionTypes.GZIP, /^cannot decompress a gzip-compressed batch: /],
    ['snappy', CompressionTypes.Snappy, /^cannot decompress a snappy-compressed batch: /],
    ['zstd', CompressionTypes.ZSTD, /^cannot decompress a zstd-compressed batch: /],
  ] as const)('a %s batch its codec cannot decompress fails the same way', async (name, type, message) => {
    const error = await codec(type)
      .decompress(Buffer.from('definitely not compressed data'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaCodecError);
    expect(error).toMatchObject({ codec: name, retriable: false });
    expect((error as Error).message).toMatch(message);
  });
});

describe('findCodecFailure', () => {
  it('finds the codec error behind the errors kafkajs wraps it in', () => {
    const cause = new KafkaCodecError('zstd', 'cannot decompress a zstd-compressed batch: bad magic');
    const wrapped = Object.assign(new Error(cause.message, { cause }), { name: 'KafkaJSNonRetriableError' });
    expect(findCodecFailure(wrapped)).toEqual({ codec: 'zstd', message: cause.message });
  });

  it("recognises kafkajs's own placeholder, thrown when no codec was registered at all", () => {
    const notImplemented = Object.assign(new Error('Snappy compression not implemented'), { name: 'KafkaJSNotImplemented' });
    expect(findCodecFailure(notImplemented)).toEqual({ codec: 'snappy', message: 'no snappy codec registered' });
  });

  it('ignores every other error', () => {
    expect(findCodecFailure(new Error('The coordinator is loading'))).toBeUndefined();
    expect(findCodecFailure(Object.assign(new Error('Not implemented'), { name: 'KafkaJSNotImplemented' }))).toBeUndefined();
    expect(findCodecFailure('a string')).toBeUndefined();
  });
});

describe('createCodecFaultWatch', () => {
  const failure = new KafkaCodecError('snappy', 'no snappy codec: its package failed to load (gone)');

  it('names the codec and the partition, and lasts until the failed broker decodes a fetch again', () => {
    const watch = createCodecFaultWatch({ topic: 'results', log: pino({ level: 'silent' }) });
    watch.fetchStarted('1');
    watch.fetchStarted('2');
    expect(watch.fetched('2')).toBe(false);
    watch.fetchStarted('2');
    const fault = watch.crashed(failure, [3]);
    expect(fault).toMatchObject({
      codec: 'snappy',
      partitions: [3],
      reason: 'cannot read snappy-compressed records of results (partition 3): no snappy codec: its package failed to load (gone)',
    });
    // Both fetches were in flight: either broker may hold the batch, so both must decode again.
    expect(watch.fetched('1')).toBe(false);
    expect(watch.current()).toBe(fault);
    expect(watch.fetched('2')).toBe(true);
    expect(watch.current()).toBeUndefined();
  });

  it('is over for this member once a rebalance moves the partition away, and not before', () => {
    const watch = createCodecFaultWatch({ topic: 'results', log: pino({ level: 'silent' }) });
    watch.fetchStarted('1');
    watch.crashed(failure, [3]);
    expect(watch.assigned([3, 4])).toBe(false);
    expect(watch.current()?.partitions).toEqual([3]);
    expect(watch.assigned([4, 5])).toBe(true);
    expect(watch.current()).toBeUndefined();
    expect(watch.assigned([3])).toBe(false);
  });

  it('lists every partition the batch may be on, and keeps the time the fault began', () => {
    const watch = createCodecFaultWatch({ topic: 'results', log: pino({ level: 'silent' }) });
    watch.fetchStarted('1');
    const first = watch.crashed(failure, [0, 1, 2]);
    expect(first?.reason).toContain('(one of partitions 0, 1, 2)');
    watch.fetchStarted('1');
    expect(watch.crashed(failure, [0, 1, 2])?.since).toBe(first?.since);
  });

  it('narrows the partitions to those that can hold the batch, and logs one error naming them', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const watch = createCodecFaultWatch({ topic: 'results', log, locate: async (candidates) => candidates.filter((p) => p === 2) });
    watch.fetchStarted('1');
    expect(watch.crashed(failure, [0, 2, 4])?.partitions).toEqual([0, 2, 4]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(watch.current()?.reason).toBe('cannot read snappy-compressed records of results (partition 2): no snappy codec: its package failed to load (gone)');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, codec: 'snappy', topic: 'results', partitions: [2], msg: watch.current()?.reason });
    // The next retry fails the same way: readiness goes on naming partition 2, not all three again.
    watch.fetchStarted('1');
    expect(watch.crashed(failure, [0, 2, 4])?.partitions).toEqual([2]);
  });

  it('has nothing to say about a crash that is not about compression', () => {
    const watch = createCodecFaultWatch({ topic: 'results', log: pino({ level: 'silent' }) });
    watch.fetchStarted('1');
    expect(watch.crashed(new Error('The coordinator is loading'), [0])).toBeUndefined();
    expect(watch.current()).toBeUndefined();
  });
});
