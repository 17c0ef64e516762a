/**
 * A kafkajs message as the rest of the consumer sees it, a {@link BrokerRecord} (which names no
 * broker client): its headers decoded, without a prototype, or refused unread when over the record
 * bounds (kafkajs-record-bounds.ts). Shared by the results and the requests consumers.
 */
import type { KafkaMessage } from 'kafkajs';
import type { BrokerRecord } from './broker-record.js';
import { NO_RECORD_HEADERS, recordBounds, recordRefusal } from './kafkajs-record-bounds.js';

/** The headers of a record that carries none (or whose headers were not read): empty, frozen, without a prototype. */
const NO_HEADERS: Readonly<Record<string, string | undefined>> = Object.freeze(Object.create(null) as Record<string, string | undefined>);

/** The record in a shape that names no broker client (what the decoder and the dead-letter sink take). */
export function toBrokerRecord(message: KafkaMessage, topic: string, partition: number): BrokerRecord {
  const raw = message.headers;
  const refused = recordRefusal(raw);
  if (refused !== undefined) {
    // Its headers were never read; a key over its bound is not carried on (to the dead letter).
    const key = message.key !== null && message.key.length > recordBounds().maxKeyBytes ? null : message.key;
    return { topic, partition, offset: message.offset, key, value: message.value, headers: NO_HEADERS, refused };
  }
  return { topic, partition, offset: message.offset, key: message.key, value: message.value, headers: decodeHeaders(raw) };
}

/** A record's headers decoded as UTF-8, the first value of a repeated one; {@link NO_HEADERS} when it carries none. */
function decodeHeaders(raw: KafkaMessage['headers']): BrokerRecord['headers'] {
  // Most records carry no header: they share one empty object instead of a dictionary each.
  if (raw === undefined || raw === NO_RECORD_HEADERS) return NO_HEADERS;
  const names = Object.keys(raw);
  if (names.length === 0) return NO_HEADERS;
  // No prototype: the names are the record's, and `__proto__` or `constructor` must be plain names.
  const headers: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
  for (const name of names) {
    const value = raw[name];
    // kafkajs collects a repeated header into an array; it also puts what an object literal
    // inherits there (`constructor`: [Object, value]), so only the Buffers are values.
    // No array made for the usual single value: every header of every record comes through here.
    const first = Array.isArray(value) ? value.find(isBuffer) : isBuffer(value) ? value : undefined;
    headers[name] = first === undefined ? undefined : first.toString();
  }
  return headers;
}

function isBuffer(item: unknown): item is Buffer {
  return Buffer.isBuffer(item);
}
