/**
 * The compression codecs kafkajs needs to read batches that producers compressed (the Java
 * client's `compression.type`, librdkafka's `compression.codec`), registered here, once per
 * process, in kafkajs's global codec registry:
 * - gzip and zstd: Node's own zlib (zstd since Node 22.15), with `maxOutputLength`;
 * - snappy: kafkajs-snappy (the kafkajs project's codec; pure JavaScript over snappyjs, reads the
 *   xerial framing Java and librdkafka producers write);
 * - lz4: @2l/kafkajs-lz4 over lz4-napi (LZ4 frames; the native binary ships in an npm package per
 *   platform, nothing is downloaded or built at install time).
 *
 * A compressed batch never decompresses to more than `maxBatchBytes`: a few bytes of a crafted
 * batch can state gigabytes, and a decompressor allocates what it is told. gzip and zstd stop at
 * the bound; snappy and lz4 state their blocks' sizes up front, so a batch stating more is refused
 * before it is decompressed (inflated-size.ts). Past the bound the batch fails like one its codec
 * cannot read.
 *
 * A codec package that fails to load does not stop the service: its codec is registered as missing,
 * and a batch that needs it fails with a {@link KafkaCodecError} naming the codec, as does a batch
 * its codec cannot decompress. The error is not retriable, so kafkajs gives up on the fetch at once
 * instead of retrying it in silence, and the consumer turns it into a log line and a `/readyz` reason.
 */
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { constants as zlibConstants, unzip, zstdDecompress, type ZlibOptions, type ZstdOptions } from 'node:zlib';
import kafkajs from 'kafkajs';
import { ServiceError } from '../base/errors.js';
import { lz4InflatedBound, snappyInflatedLength } from './inflated-size.js';

// kafkajs is CommonJS, and Node's ESM loader does not find these two among its named exports.
const { CompressionCodecs, CompressionTypes } = kafkajs;

/** The compression codecs of the Kafka protocol. */
export const CODEC_NAMES = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CodecName = (typeof CODEC_NAMES)[number];

/** What kafkajs calls on a codec (only `decompress` is used by a consumer). */
export interface KafkaCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

/** Loads one codec; throws when its package cannot be loaded. */
export type CodecLoader = () => KafkaCodec;

/** A batch compressed with `codec` cannot be read: the codec is missing or failed on the batch. */
export class KafkaCodecError extends ServiceError {
  readonly codec: CodecName;
  /** Read by kafkajs's retrier: retrying the same fetch gives the same batch and the same failure. */
  readonly retriable = false;
  constructor(codec: CodecName, message: string, cause?: unknown) {
    super('KAFKA_CODEC_FAILED', message, cause === undefined ? { details: { codec } } : { cause, details: { codec } });
    this.name = 'KafkaCodecError';
    this.codec = codec;
  }
}

/** The result of registration: which codecs can be read, and why the others cannot. */
export interface CodecRegistration {
  readonly available: readonly CodecName[];
  readonly missing: ReadonlyArray<{ readonly codec: CodecName; readonly reason: string }>;
}

const TYPES: Record<CodecName, number> = {
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

/** The default bound on what one compressed batch decompresses to (`KAFKA_MAX_BATCH_BYTES`). */
export const DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024;
/** The zstd window a frame may ask for: 2^27 bytes (128 MiB), zstd's own default limit. */
const ZSTD_WINDOW_LOG_MAX = 27;

const gunzip = promisify<Buffer, ZlibOptions, Buffer>(unzip);
const unzstd = promisify<Buffer, ZstdOptions, Buffer>(zstdDecompress);

/** Refuses a batch that states it decompresses to more than `max` (or cannot say), before it is decompressed. */
function boundedBy(name: CodecName, stated: (buffer: Buffer) => number, codec: KafkaCodec, max: number): KafkaCodec {
  return {
    compress: (encoder) => codec.compress(encoder),
    decompress(buffer) {
      const size = stated(buffer);
      if (size < 0) return Promise.reject(new Error(`the ${name} framing cannot be read`));
      if (size > max)
        return Promise.reject(new Error(`the batch states ${size} bytes once decompressed, over the ${max} bytes allowed (KAFKA_MAX_BATCH_BYTES)`));
      return codec.decompress(buffer);
    },
  };
}

/** kafkajs's own gzip codec, taken before registration replaces it (it compresses what the service sends). */
const kafkajsGzip = CompressionCodecs[CompressionTypes.GZIP] as () => KafkaCodec;

const require = createRequire(import.meta.url);
/**
 * Each package is required only here, inside its loader, so one that fails to load (a platform
 * without an lz4-napi binary, say) costs that codec and not the whole service.
 */
function defaultLoaders(max: number): Record<CodecName, CodecLoader> {
  return {
    gzip: () => ({ compress: (encoder) => kafkajsGzip().compress(encoder), decompress: (buffer) => gunzip(buffer, { maxOutputLength: max }) }),
    snappy: () => boundedBy('snappy', snappyInflatedLength, (require('kafkajs-snappy') as () => KafkaCodec)(), max),
    lz4: () => boundedBy('lz4', lz4InflatedBound, new (require('@2l/kafkajs-lz4') as new () => { codec(): KafkaCodec })().codec(), max),
    zstd: () => ({
      compress: () => Promise.reject(new KafkaCodecError('zstd', 'zstd compression is not supported: this service only reads zstd batches')),
      decompress: (buffer) => unzstd(buffer, { maxOutputLength: max, params: { [zlibConstants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } }),
    }),
  };
}

let registered: CodecRegistration | undefined;

/**
 * Registers the codecs in kafkajs's registry, which is global to the process: the first call
 * registers, later calls return its result. `loaders` replaces the package of a codec; tests use it
 * to stand in for a package that failed to load. `maxBatchBytes` bounds what one batch decompresses to.
 */
export function registerKafkaCodecs(loaders: Partial<Record<CodecName, CodecLoader>> = {}, maxBatchBytes = DEFAULT_MAX_BATCH_BYTES): CodecRegistration {
  if (registered !== undefined) return registered;
  const builtIn = defaultLoaders(maxBatchBytes);
  const available: CodecName[] = [];
  const missing: Array<{ codec: CodecName; reason: string }> = [];
  const registry = CompressionCodecs as Record<number, () => KafkaCodec>;
  for (const name of CODEC_NAMES) {
    let codec: KafkaCodec;
    try {
      codec = (loaders[name] ?? builtIn[name])();
      available.push(name);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      missing.push({ codec: name, reason });
      registry[TYPES[name]] = () => missingCodec(name, reason);
      continue;
    }
    const guarded = guard(name, codec);
    registry[TYPES[name]] = () => guarded;
  }
  registered = { available, missing };
  return registered;
}

/** Makes every decompression failure a non-retriable error that names the codec. */
function guard(name: CodecName, codec: KafkaCodec): KafkaCodec {
  return {
    compress: (encoder) => codec.compress(encoder),
    async decompress(buffer) {
      try {
        return await codec.decompress(buffer);
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        throw new KafkaCodecError(name, `cannot decompress a ${name}-compressed batch: ${cause}`, error);
      }
    },
  };
}

function missingCodec(name: CodecName, reason: string): KafkaCodec {
  const fail = () => Promise.reject(new KafkaCodecError(name, `no ${name} codec: its package failed to load (${reason})`));
  return { compress: fail, decompress: fail };
}

// kafkajs's own placeholder when no codec was registered at all, e.g. "Snappy compression not implemented".
const KAFKAJS_MISSING = /^(GZIP|Snappy|LZ4|ZSTD) compression not implemented$/i;

/**
 * The codec failure behind an error kafkajs reports (it wraps the original in `cause`), or
 * undefined when the error has nothing to do with compression.
 */
export function findCodecFailure(error: unknown): { codec: CodecName; message: string } | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof KafkaCodecError) return { codec: e.codec, message: e.message };
    const kafkajs = KAFKAJS_MISSING.exec(e.message);
    if (e.name === 'KafkaJSNotImplemented' && kafkajs !== null) {
      const codec = (kafkajs[1] as string).toLowerCase() as CodecName;
      return { codec, message: `no ${codec} codec registered` };
    }
  }
  return undefined;
}
