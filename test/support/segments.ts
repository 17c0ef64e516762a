/**
 * Reads the record batches a Kafka node stored for a partition, straight from its log segment, so a
 * test can prove how a batch was compressed on the broker rather than trust the producer's flag.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The compression codec ids of the record batch attributes (bits 0-2). */
export const CODEC_IDS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

/** One stored record batch: its first offset, record count and codec id. */
export interface StoredBatch {
  readonly baseOffset: bigint;
  readonly records: number;
  readonly codec: number;
}

/**
 * The batches of `topic`/`partition` in the log folder of a node (`log.dirs`), in order. The record
 * batch v2 header: baseOffset int64, length int32, leader epoch int32, magic int8, crc int32,
 * attributes int16, lastOffsetDelta int32, timestamps 2×int64, producer id int64, epoch int16,
 * base sequence int32, record count int32.
 */
export async function storedBatches(logDir: string, topic: string, partition: number): Promise<StoredBatch[]> {
  const folder = join(logDir, `${topic}-${partition}`);
  const segments = (await readdir(folder)).filter((f) => f.endsWith('.log')).sort();
  const batches: StoredBatch[] = [];
  for (const segment of segments) {
    const data = await readFile(join(folder, segment));
    for (let at = 0; at + 61 <= data.length;) {
      const length = data.readInt32BE(at + 8);
      if (length <= 0 || at + 12 + length > data.length) break;
      if (data.readInt8(at + 16) !== 2) throw new Error(`${segment}: batch at byte ${at} is not record batch v2`);
      batches.push({ baseOffset: data.readBigInt64BE(at), codec: data.readInt16BE(at + 21) & 0x07, records: data.readInt32BE(at + 57) });
      at += 12 + length;
    }
  }
  return batches;
}
