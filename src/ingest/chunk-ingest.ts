/**
 * What the consumer does with one chunk of records of a partition, apart from the broker client:
 * decode them, send the malformed ones to the dead-letter sink, and hand the rest to the state in
 * one call (one promise per chunk, not per record), counting what became of each.
 *
 * Decoding and storing are two steps so that the loop can retry storing alone while the state is
 * unavailable: a chunk is decoded, counted and dead-lettered once, however often it is stored.
 * A chunk that holds records whose `traceparent` is sampled gets one `process` span per attempt to
 * store it, linked to those records (telemetry/trace-context.ts); the other records cost one header
 * lookup each.
 */
import type { IncomingMessage } from '../domain/types.js';
import { DEFAULT_JSON_SHAPE, type JsonShapeLimits } from '../base/json-shape.js';
import { ServiceError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { carriesSampledTrace, traceChunkStore, type SampledRecord } from '../telemetry/trace-context.js';
import { recordCoordinates, type BrokerRecord } from './broker-record.js';
import { decodeResultMessage } from './decode-result.js';
import type { RecordFault } from './record-envelope.js';
import type { ConsumerStats, DeadLetterSink, ResultEventHandler } from './consumer.js';

/** A decoded chunk, ready to be stored. */
export interface DecodedChunk {
  /** The well-formed messages, in record order. */
  readonly messages: readonly IncomingMessage[];
  /** The record each message came from (for the log line of a message the state refused). */
  readonly records: readonly BrokerRecord[];
  /**
   * Settles once every malformed record of the chunk is in the dead-letter topic (at once when
   * there is none or no sink); rejects if one could not be sent. It must be awaited before the
   * chunk's offsets move: a record is never skipped without its copy.
   */
  readonly deadLettered: Promise<void>;
  /** The messages whose records carry a sampled trace context, in order; absent when none did. */
  readonly sampled?: readonly SampledRecord[];
}

/** Decodes and stores chunks of records (see {@link createChunkIngest}). */
export interface ChunkIngest {
  /** Decodes `records`, counts them, and starts sending the malformed ones to the dead-letter sink. */
  decode(records: readonly BrokerRecord[]): DecodedChunk;
  /** Hands the chunk's messages to the state in one call and counts the outcomes; rejects as the state did. */
  store(chunk: DecodedChunk): Promise<void>;
}

/** Options of {@link createChunkIngest}. */
export interface ChunkIngestOptions {
  readonly onEvents: ResultEventHandler;
  /** Where malformed records go; without it they are only logged and counted. */
  readonly deadLetter?: DeadLetterSink | undefined;
  /** Counters updated in place. */
  readonly stats: ConsumerStats;
  /** Largest record value (uncompressed bytes) decoded; larger ones are malformed. */
  readonly maxRecordBytes?: number;
  /** Shape limits of a payload (`JSON_MAX_*`); a record past them is malformed. */
  readonly jsonShape?: JsonShapeLimits;
  /** How long one call into the state may go unanswered ({@link STORE_CALL_LIMIT_MS} unless given). */
  readonly storeCallLimitMs?: number;
  readonly log: Logger;
}

/**
 * How long a call into the state may go unanswered before it counts as `STORE_UNAVAILABLE`, so
 * that the lane stores the chunk again. Far above a healthy call's longest (a Redis command's 2 s
 * timeout plus a `WAIT` for replicas, retried once by the client): it ends only a call that no
 * timeout of the client ended, which would otherwise hold its partition for good, the consumer
 * heartbeating and only the lag growing. The call given up on is still awaited with the next one
 * (whichever answers first is counted; appends are idempotent, so if the first landed the second
 * finds its messages there, counted as duplicates), and a chunk has at most
 * {@link CALLS_PER_CHUNK} calls unanswered: a state that answers none holds no more of its data.
 */
export const STORE_CALL_LIMIT_MS = 30_000;

/** Calls of one chunk the state may leave unanswered at once; past them a retry waits on those. */
const CALLS_PER_CHUNK = 2;

type Outcomes = Awaited<ReturnType<ResultEventHandler>>;

const settled = Promise.resolve();

/** Creates the chunk handling of one consumer. */
export function createChunkIngest(options: ChunkIngestOptions): ChunkIngest {
  /** Each chunk's calls not answered yet (a chunk is dropped with its lane: nothing is kept past it). */
  const unanswered = new WeakMap<DecodedChunk, Set<Promise<Outcomes>>>();
  const { stats, log, deadLetter } = options;
  const shape = options.jsonShape ?? DEFAULT_JSON_SHAPE;

  function decode(records: readonly BrokerRecord[]): DecodedChunk {
    stats.consumed += records.length;
    const messages: IncomingMessage[] = [];
    const kept: BrokerRecord[] = [];
    let sends: Array<Promise<void>> | undefined;
    let sampled: SampledRecord[] | undefined;
    for (const record of records) {
      const decoded = record.refused === undefined ? decodeResultMessage(record, options.maxRecordBytes, shape) : refusedShape(record);
      if (!('ok' in decoded)) {
        const traceparent = record.headers.traceparent;
        if (carriesSampledTrace(traceparent))
          (sampled ??= []).push({ index: messages.length, traceparent, tracestate: record.headers.tracestate, correlationId: decoded.correlationId });
        messages.push(decoded);
        kept.push(record);
        continue;
      }
      stats.malformed += 1;
      log.warn({ record: recordCoordinates(record), reason: decoded.reason }, 'skipping malformed result record');
      // The sink sends one record at a time, in the order handed over.
      if (deadLetter !== undefined) (sends ??= []).push(deadLetter(deadLetterCopy(record), decoded.reason).then(() => void (stats.deadLettered += 1)));
    }
    const deadLettered = sends === undefined ? settled : Promise.all(sends).then(() => undefined);
    // Awaited by the loop later, after the store; until then a failed send must not count as unhandled.
    deadLettered.catch(() => undefined);
    return sampled === undefined ? { messages, records: kept, deadLettered } : { messages, records: kept, deadLettered, sampled };
  }

  /** A record refused before it was decoded: counted apart too, never parsed. */
  function refusedShape(record: BrokerRecord): RecordFault {
    stats.oversized = (stats.oversized ?? 0) + 1;
    return { ok: false, reason: record.refused as string };
  }

  /** What is copied to the dead-letter topic: a refused record's value only within its bound, so the copy is bounded too. */
  function deadLetterCopy(record: BrokerRecord): BrokerRecord {
    if (record.refused === undefined || record.value === null || record.value.length <= (options.maxRecordBytes ?? Infinity)) return record;
    return { ...record, value: null };
  }

  async function store(chunk: DecodedChunk): Promise<void> {
    if (chunk.messages.length === 0) return;
    if (chunk.sampled !== undefined) return storeTraced(chunk, chunk.sampled);
    count(chunk, await answered(chunk));
  }

  /**
   * The state's answer for `chunk`: a new call, unless it already has {@link CALLS_PER_CHUNK} left
   * unanswered, raced with those; `STORE_UNAVAILABLE` once none answered within the limit.
   */
  async function answered(chunk: DecodedChunk): Promise<Outcomes> {
    let calls = unanswered.get(chunk);
    if (calls === undefined) unanswered.set(chunk, (calls = new Set()));
    if (calls.size < CALLS_PER_CHUNK) {
      const call = options.onEvents(chunk.messages);
      calls.add(call);
      const done = () => void calls.delete(call);
      call.then(done, done);
    }
    const limitMs = options.storeCallLimitMs ?? STORE_CALL_LIMIT_MS;
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceError('STORE_UNAVAILABLE', `the state did not answer a store call within ${limitMs} ms`)), limitMs);
    });
    try {
      return await Promise.race([...calls, overdue]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function storeTraced(chunk: DecodedChunk, sampled: readonly SampledRecord[]): Promise<void> {
    const first = chunk.records[0] as BrokerRecord;
    const attempt = traceChunkStore({ topic: first.topic, partition: first.partition, messages: chunk.messages.length }, sampled, chunk.messages);
    let outcomes;
    try {
      outcomes = await answered(chunk);
    } catch (error) {
      attempt?.end({ error });
      throw error;
    }
    attempt?.end({ outcomes });
    count(chunk, outcomes);
  }

  function count(chunk: DecodedChunk, outcomes: Outcomes): void {
    if (outcomes.length !== chunk.messages.length) throw new Error(`the state answered ${outcomes.length} outcomes for ${chunk.messages.length} messages`);
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i];
      if (outcome === 'inserted') stats.stored += 1;
      else if (outcome === 'duplicate') stats.duplicates += 1;
      else {
        stats.overLimit += 1;
        const record = chunk.records[i] as BrokerRecord;
        log.warn(
          { record: recordCoordinates(record), correlationId: chunk.messages[i]?.correlationId },
          'test holds the maximum number of messages (or the store its maximum of bytes); result not stored',
        );
      }
    }
  }

  return { decode, store };
}
