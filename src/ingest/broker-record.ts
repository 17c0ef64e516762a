/**
 * A consumed record in a shape that names no broker client, so that the decoder and the handler
 * never see kafkajs types and another client can replace it inside this folder.
 */

/** One record as read from the results topic. */
export interface BrokerRecord {
  readonly topic: string;
  readonly partition: number;
  /** Offsets are 64-bit; kept as the decimal string the client gives. */
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /**
   * Header values decoded as UTF-8 (the first value when a header repeats), in an object without a
   * prototype: every name the record carries is a plain name, and no name reaches Object.prototype.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * Why the record was refused before it was decoded (its headers or key over the bounds of
   * kafkajs-record-bounds.ts); its headers were not read, so `headers` is empty. Absent otherwise.
   */
  readonly refused?: string;
}

/** `topic/partition/offset`, for logs and the fallback deduplication key. */
export function recordCoordinates(record: Pick<BrokerRecord, 'topic' | 'partition' | 'offset'>): string {
  return `${record.topic}/${record.partition}/${record.offset}`;
}
