/**
 * A partition's lane, apart from the broker: kafkajs's payloads are stand-ins (the seam is
 * `eachBatch`), the chunk handling and the delays are the real ones. Batches that queue up behind
 * the chunk being stored go to the state as one call (a broker that hands out small batches costs
 * the state no more calls than one that hands out large ones), within the lane's bounds in records
 * and bytes, and a failed group is read again from its first record.
 */
import type { Batch, Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/base/logger.js';
import type { AppendResult, IncomingMessage } from '../../../src/domain/types.js';
import { createChunkIngest } from '../../../src/ingest/chunk-ingest.js';
import type { ConsumerStats } from '../../../src/ingest/consumer.js';
import { createIngestDelays } from '../../../src/ingest/ingest-delays.js';
import { CHUNK, LANE_BYTES, LANE_RECORDS, createBatchProcessor } from '../../../src/ingest/kafka-batch-processor.js';
import type { OffsetCommits } from '../../../src/ingest/kafka-offset-commits.js';

const TOPIC = 'results';

/** A batch of `count` records of partition 0 from `first` on, sequences following offsets; `keyBytes` of key each. */
function payloadOf(first: number, count: number, keyBytes = 0, isRunning: () => boolean = () => true): EachBatchPayload {
  const messages: KafkaMessage[] = Array.from({ length: count }, (_, i) => ({
    key: keyBytes === 0 ? null : Buffer.alloc(keyBytes, 'k'),
    value: Buffer.from(JSON.stringify({ correlationId: 'lane-test', sequence: first + i + 1, payload: first + i })),
    timestamp: String(Date.now()),
    attributes: 0,
    offset: String(first + i),
    headers: {},
  }));
  const batch = { topic: TOPIC, partition: 0, highWatermark: String(first + count), messages } as unknown as Batch;
  return {
    batch,
    isRunning,
    isStale: () => false,
    resolveOffset: () => undefined,
    heartbeat: async () => undefined,
  } as unknown as EachBatchPayload;
}

/** A processor whose state answers through `answer`; what it marked and where it sought are recorded. */
function setup(
  answer: (messages: readonly IncomingMessage[], call: number) => Promise<void>,
  storeCallLimitMs?: number,
  commitIfDue: OffsetCommits['commitIfDue'] = async () => undefined,
) {
  const calls: number[][] = [];
  const processed: string[] = [];
  const seeks: string[] = [];
  const onEvents = async (messages: readonly IncomingMessage[]): Promise<Array<AppendResult['outcome']>> => {
    calls.push(messages.map((m) => m.sequence as number));
    await answer(messages, calls.length);
    return messages.map(() => 'inserted');
  };
  const stats: ConsumerStats = { consumed: 0, stored: 0, duplicates: 0, malformed: 0, deadLettered: 0, overLimit: 0 };
  const commits: OffsetCommits = {
    processed: (_topic, _partition, next) => void processed.push(next),
    assigned: () => undefined,
    commit: async () => undefined,
    commitIfDue,
    dispose: () => undefined,
  };
  const consumer = { seek: ({ offset }: { offset: string }) => void seeks.push(offset) } as unknown as Consumer;
  const processor = createBatchProcessor({
    chunks: createChunkIngest({ onEvents, stats, log: createSilentLogger(), ...(storeCallLimitMs === undefined ? {} : { storeCallLimitMs }) }),
    commits,
    consumer: () => consumer,
    delays: createIngestDelays(),
    log: createSilentLogger(),
  });
  return { processor, calls, processed, seeks, stats };
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Resolves once `check` holds, looking after each turn of the event loop. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('createBatchProcessor', () => {
  it('stores the small batches that queued up behind a chunk as one call, in order, marked once at their end', async () => {
    const first = gate();
    const { processor, calls, processed } = setup((_messages, call) => (call === 1 ? first.opened : Promise.resolve()));
    // Opened only after the loop below ran: the first chunk's call is still waiting meanwhile.
    setTimeout(first.open, 50);
    for (let batch = 0; batch < 6; batch++) await processor.eachBatch(payloadOf(batch * 100, 100));
    await until(() => calls.flat().length === 600);
    expect(calls.map((c) => c.length)).toEqual([100, 500]);
    expect(calls.flat()).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    await until(() => processed.length === 2);
    expect(processed).toEqual(['100', '600']);
  });

  it('never joins more than a chunk into one call, and cuts a batch larger than a chunk', async () => {
    const first = gate();
    const { processor, calls, processed } = setup((_messages, call) => (call === 1 ? first.opened : Promise.resolve()));
    setTimeout(first.open, 50);
    await processor.eachBatch(payloadOf(0, 10));
    const size = CHUNK / 4 + 1;
    for (let batch = 0; batch < 4; batch++) await processor.eachBatch(payloadOf(10 + batch * size, size));
    await processor.eachBatch(payloadOf(10 + 4 * size, CHUNK + 5));
    const total = 10 + 4 * size + CHUNK + 5;
    await until(() => calls.flat().length === total);
    // Three of the four quarter batches fit in a chunk, the fourth starts the next call; the large batch goes alone, cut.
    expect(calls.map((c) => c.length)).toEqual([10, 3 * size, size, CHUNK, 5]);
    expect(calls.flat()).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    await until(() => processed.length === 5);
    expect(processed.at(-1)).toBe(String(total));
  });

  it.each([
    ['records', LANE_RECORDS / 4, 0],
    ['bytes', 1, Math.ceil(LANE_BYTES / 4) + 1],
  ])('waits for room once the lane holds more than two batches and its bound in %s', async (_bound, count, keyBytes) => {
    const first = gate();
    const { processor, calls } = setup((_messages, call) => (call === 1 ? first.opened : Promise.resolve()));
    // Two batches always have room; past them, batches are taken while the lane is under its bounds (the fourth reaches them).
    const batches = 4;
    for (let batch = 0; batch < batches; batch++) await processor.eachBatch(payloadOf(batch * count, count, keyBytes));
    let taken = false;
    const next = processor.eachBatch(payloadOf(batches * count, count, keyBytes)).then(() => (taken = true));
    // Nothing can make room while the first call waits: the batch is still not taken after several turns.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(taken).toBe(false);
    first.open();
    await next;
    await until(() => calls.flat().length === (batches + 1) * count);
    expect(calls.flat()).toEqual(Array.from({ length: (batches + 1) * count }, (_, i) => i + 1));
  });

  it('reads a failed group again from its first record: the batches behind it dropped, nothing of it marked', async () => {
    const first = gate();
    const failure = new Error('the state failed unexpectedly');
    const { processor, calls, processed, seeks } = setup(async (_messages, call) => {
      if (call === 1) await first.opened;
      if (call === 2) throw failure;
    });
    setTimeout(first.open, 50);
    for (let batch = 0; batch < 4; batch++) await processor.eachBatch(payloadOf(batch * 100, 100));
    // Behind the group that fails: a batch too large to join it, dropped with it.
    await processor.eachBatch(payloadOf(400, CHUNK));
    await until(() => seeks.length === 1);
    // Let the lane go past the dropped batch, had it not been dropped.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(calls.map((c) => c.length)).toEqual([100, 300]);
    expect(seeks).toEqual(['100']);
    expect(processed).toEqual(['100']);
    // The partition's next batch fails with it, so kafkajs fetches again from the seek.
    await expect(processor.eachBatch(payloadOf(400 + CHUNK, 100))).rejects.toBe(failure);
    await processor.eachBatch(payloadOf(100, 300));
    await until(() => processed.length === 2);
    expect(calls.at(-1)).toEqual(Array.from({ length: 300 }, (_, i) => i + 101));
    expect(processed).toEqual(['100', '400']);
  });

  it("never joins an old fetcher's batch with those of the fetcher that replaced it: the old one is dropped alone", async () => {
    const first = gate();
    const { processor, calls, processed } = setup((_messages, call) => (call === 1 ? first.opened : Promise.resolve()));
    let oldRunning = true;
    const old = () => oldRunning;
    await processor.eachBatch(payloadOf(0, 100, 0, old));
    await processor.eachBatch(payloadOf(100, 100, 0, old));
    // kafkajs restarts its fetching: the old fetcher stops, the new one reads again from the committed offset (0).
    oldRunning = false;
    await processor.eachBatch(payloadOf(0, 100));
    await processor.eachBatch(payloadOf(100, 100));
    first.open();
    await until(() => processed.at(-1) === '200');
    await processor.eachBatch(payloadOf(200, 100));
    await until(() => processed.at(-1) === '300');
    // Every record up to the last mark was stored: nothing of 100–199 was marked past unstored.
    const stored = new Set(calls.flat());
    expect(Array.from({ length: 300 }, (_, i) => i + 1).filter((s) => !stored.has(s))).toEqual([]);
    expect(calls.map((c) => c.length)).toEqual([100, 200, 100]);
  });

  it('stores a chunk again when the state leaves a call unanswered past its limit, and goes on', async () => {
    // The first call never answers, as a client whose own timeouts missed it.
    const { processor, calls, processed, stats } = setup((_messages, call) => (call === 1 ? new Promise<void>(() => undefined) : Promise.resolve()), 50);
    await processor.eachBatch(payloadOf(0, 100));
    await processor.eachBatch(payloadOf(100, 100));
    await until(() => processed.length === 2);
    expect(calls.map((c) => c.length)).toEqual([100, 100, 100]);
    expect(calls.flat()).toEqual([...Array.from({ length: 100 }, (_, i) => i + 1), ...Array.from({ length: 200 }, (_, i) => i + 1)]);
    expect(processed).toEqual(['100', '200']);
    expect(stats.stored).toBe(200);
  });

  it("goes on storing while an offset commit goes unanswered: a commit never holds the partition, nor kafkajs's fetches behind it", async () => {
    // kafkajs 2.2.4 retried a commit sent to a group coordinator that moved for minutes (it looks
    // the coordinator up again only when the member rejoins); a lane that waited for it filled up,
    // and kafkajs, waiting on `eachBatch`, neither heartbeated nor rejoined.
    let commitsAsked = 0;
    const { processor, calls, processed } = setup(
      () => Promise.resolve(),
      undefined,
      () => (commitsAsked++, new Promise<void>(() => undefined)),
    );
    for (let batch = 0; batch < 6; batch++) await processor.eachBatch(payloadOf(batch * 100, 100));
    await until(() => calls.flat().length === 600);
    expect(calls.flat()).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    await until(() => processed.at(-1) === '600');
    expect(commitsAsked).toBeGreaterThan(0);
  });
});
