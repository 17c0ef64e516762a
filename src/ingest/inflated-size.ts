/**
 * How large a snappy- or lz4-compressed batch becomes once decompressed, read from its framing
 * before anything is decompressed: both formats state each block's size up front, and their
 * decompressors allocate what a block states. A few bytes can state gigabytes, so a batch whose
 * stated size is over the bound is refused unread (kafka-codecs.ts). gzip and zstd are bounded by
 * Node's zlib itself (`maxOutputLength`). Pure: no I/O.
 */

/** The xerial framing Java and librdkafka producers wrap snappy blocks in. */
const XERIAL_HEADER = Buffer.from([130, 83, 78, 65, 80, 80, 89, 0]);
const XERIAL_BLOCKS_AT = 16;

/** The uncompressed length a raw snappy block starts with (a varint), or -1 when it has none. */
function snappyBlockLength(block: Buffer): number {
  let length = 0;
  for (let i = 0, shift = 0; i < block.length && shift < 35; i++, shift += 7) {
    const byte = block[i] as number;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return length;
  }
  return -1;
}

/** What a snappy batch (raw, or xerial-framed blocks) states it decompresses to; -1 when it cannot be read. */
export function snappyInflatedLength(buffer: Buffer): number {
  if (!buffer.subarray(0, 8).equals(XERIAL_HEADER)) return snappyBlockLength(buffer);
  let total = 0;
  for (let at = XERIAL_BLOCKS_AT; at + 4 <= buffer.length;) {
    const size = buffer.readUInt32BE(at);
    at += 4;
    const length = snappyBlockLength(buffer.subarray(at, at + size));
    if (length < 0) return -1;
    total += length;
    at += size;
  }
  return total;
}

const LZ4_MAGIC = 0x184d2204;
const LZ4_SKIPPABLE = 0x184d2a50;
/** Block maximum sizes by the frame descriptor's BD field (4 to 7). */
const LZ4_BLOCK_MAX = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/** The most one compressed LZ4 byte can become: a match's length byte of 255. */
const LZ4_MAX_RATIO = 255;

/**
 * The most an LZ4 frame sequence can decompress to: per block, its own size when it is stored
 * uncompressed, else the least of the frame's maximum block size and what its compressed bytes
 * can expand to; and no more than a frame's stated content size. -1 when the framing cannot be read.
 */
export function lz4InflatedBound(buffer: Buffer): number {
  let total = 0;
  for (let at = 0; at < buffer.length;) {
    if (at + 4 > buffer.length) return -1;
    const magic = buffer.readUInt32LE(at);
    if ((magic & 0xfffffff0) === LZ4_SKIPPABLE) {
      if (at + 8 > buffer.length) return -1;
      at += 8 + buffer.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== LZ4_MAGIC || at + 7 > buffer.length) return -1;
    const flags = buffer[at + 4] as number;
    const blockMax = LZ4_BLOCK_MAX[((buffer[at + 5] as number) >> 4) & 7] ?? 0;
    if (blockMax === 0) return -1;
    const blockChecksum = (flags & 0x10) !== 0;
    const hasContentSize = (flags & 0x08) !== 0;
    const dictionary = (flags & 0x01) !== 0;
    if (hasContentSize && at + 14 > buffer.length) return -1;
    const contentSize = hasContentSize ? Number(buffer.readBigUInt64LE(at + 6)) : Infinity;
    at += 6 + (hasContentSize ? 8 : 0) + (dictionary ? 4 : 0) + 1;
    let frame = 0;
    for (;;) {
      if (at + 4 > buffer.length) return -1;
      const word = buffer.readUInt32LE(at);
      const size = word & 0x7fffffff;
      at += 4;
      if (size === 0) break;
      // The high bit marks a block stored as it is.
      frame += (word & 0x80000000) !== 0 ? size : Math.min(blockMax, size * LZ4_MAX_RATIO);
      at += size + (blockChecksum ? 4 : 0);
    }
    // The content checksum, when the frame has one.
    if ((flags & 0x04) !== 0) at += 4;
    total += Math.min(frame, contentSize);
  }
  return total;
}
